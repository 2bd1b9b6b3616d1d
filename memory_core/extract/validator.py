"""The extraction validator: from a reviewed candidate to a WriteRequest, or a reasoned rejection.

Order (the rest of the design's list, duplicates and contradictions, happens inside
:meth:`Ingestor.write`, exactly as for explicit writes):

1. the record type and write target must be ones extraction may use, and the principal must be
   allowed to write there;
2. the evidence must be a verbatim span of a transcript turn (checked before review as well);
3. the source kind comes from where the quote is and what it says: ``user_statement`` only for a
   user turn whose words entail the content, otherwise ``agent_inference``; a reviewer's
   confidence plays no part, and the status follows from the source kind in the Ingestor;
4. each date needs its expression in the supporting turn and is resolved against that turn's
   timestamp; unsupported dates are dropped, the candidate is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..text import quote_fold as fold, quote_in
from ..ingest.writer import WriteRequest
from ..policy.grants import ScopeAccess
from ..policy.scopes import Scope, parse_scope, private_scope
from .candidates import TEMPORAL_FIELDS, Candidate, SummaryProposal, Transcript, Turn
from .support import supports
from .temporal import TemporalCheck, annotate, check_claim


@dataclass
class EvidenceLocation:
    turn: Turn
    note: str | None = None


@dataclass
class Validated:
    """The validator's result for one candidate."""

    ok: bool
    outcome: str  # "valid" | "rejected_<reason>"
    reason: str
    request: WriteRequest | None = None
    notes: list[str] = field(default_factory=list)
    temporal: list[TemporalCheck] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "outcome": self.outcome, "reason": self.reason, "notes": self.notes,
                               "temporal": [t.to_dict() for t in self.temporal]}
        if self.request is not None:
            out["source_kind"] = self.request.source_kind
            out["scope"] = self.request.scope.key
            out["content"] = self.request.content
            out["evidence_turn"] = self.request.evidence_turn
        return out


def locate_evidence(transcript: Transcript, quote: str, turn_hint: int | None) -> EvidenceLocation | None:
    """The turn holding ``quote`` verbatim (case, whitespace and quote marks folded), preferring the hinted turn."""
    if not fold(quote):
        return None

    def holds(turn: Turn) -> bool:
        return quote_in(quote, turn.content)

    if turn_hint is not None:
        hinted = transcript.turn(turn_hint)
        if hinted is not None and holds(hinted):
            return EvidenceLocation(hinted)
    for turn in transcript.turns:
        if holds(turn):
            note = None if turn_hint is None else f"the quote is in turn {turn.turn}, not turn {turn_hint} as proposed"
            return EvidenceLocation(turn, note)
    return None


class Validator:
    """Validates candidates of one run (one transcript, one principal)."""

    def __init__(self, judge, transcript: Transcript, access: ScopeAccess, run_id: str) -> None:
        self.judge = judge
        self.transcript = transcript
        self.access = access
        self.run_id = run_id

    @property
    def actor(self) -> str:
        return f"extractor:{self.run_id}"

    def scope_for(self, candidate: Candidate) -> Scope | None:
        label = candidate.target
        if label not in self.transcript.write_targets:
            return None
        return parse_scope(self.transcript.write_targets[label])

    def validate(self, candidate: Candidate) -> Validated:
        """Check one reviewed candidate; on success ``request`` is ready for Ingestor.write."""
        notes: list[str] = []
        if candidate.type == "procedural":
            return Validated(False, "rejected_type", "extraction never writes procedural records; they are authored explicitly")
        scope = self.scope_for(candidate)
        if scope is None:
            offered = ", ".join(sorted(self.transcript.write_targets))
            return Validated(False, "rejected_target", f"write target {candidate.target!r} is not offered by this session ({offered})")
        decision = self.access.can_write(scope)
        if not decision:
            return Validated(False, "rejected_permission", decision.reason)
        location = locate_evidence(self.transcript, candidate.evidence, candidate.evidence_turn)
        if location is None:
            return Validated(False, "rejected_evidence_not_found", "the evidence is not a verbatim span of any transcript turn")
        if location.note:
            notes.append(location.note)
        turn = location.turn

        source_kind = "agent_inference"
        if candidate.source_kind == "user_statement":
            if turn.role == "user":
                entailment = supports(self.judge, candidate.evidence, candidate.content)
                if entailment.entailed:
                    source_kind = "user_statement"
                else:
                    notes.append(f"stored as agent_inference: the quote does not entail the content ({entailment.reason})")
            else:
                notes.append(f"stored as agent_inference: the quote is from a {turn.role} turn, not a user turn")

        checks: list[TemporalCheck] = []
        values: dict[str, Any] = {}
        for name in TEMPORAL_FIELDS:
            claim = getattr(candidate, name)
            if claim is None:
                continue
            check = check_claim(name, claim, turn.content, turn.at)
            checks.append(check)
            if check.accepted:
                values[name] = check.value
            else:
                notes.append(f"{name} dropped: {check.reason}")
        if values.get("valid_from") and values.get("valid_until") and values["valid_until"] <= values["valid_from"]:
            notes.append("valid_from and valid_until dropped: the range they give is empty")
            values.pop("valid_from")
            values.pop("valid_until")
            for check in checks:
                if check.field in ("valid_from", "valid_until"):
                    check.accepted = False
        content = annotate(candidate.content, [c for c in checks if c.accepted])

        request = WriteRequest(
            type=candidate.type, content=content, scope=scope, source_kind=source_kind,
            agent_id=self.transcript.agent_id, user_id=self.transcript.user_id, actor=self.actor,
            attribute=candidate.attribute if candidate.type != "episodic" else None,
            about=candidate.about, about_kind=candidate.about_kind, mentions=list(candidate.mentions),
            evidence=candidate.evidence, session_id=self.transcript.session_id, tags=["extracted", *candidate.tags],
            event_at=turn.at if candidate.type == "episodic" else None,
            valid_from=values.get("valid_from"), valid_until=values.get("valid_until"), review_at=values.get("review_at"),
            source_ref=self.transcript.session_id, operation="extraction", evidence_verified=True,
            evidence_turn=turn.turn,
        )
        return Validated(True, "valid", f"quote found in {turn.role} turn {turn.turn}; source {source_kind}", request, notes, checks)

    def summary_scope(self) -> tuple[Scope, str]:
        """Where the summary goes: the personal target if writable, else the agent-user private scope."""
        personal = self.transcript.write_targets.get("personal")
        if personal:
            scope = parse_scope(personal)
            if self.access.can_write(scope):
                return scope, f"personal target {scope.key}"
        scope = private_scope(self.transcript.agent_id, self.transcript.user_id)
        return scope, f"private scope {scope.key}: the agent may not write to the personal target"

    def validate_summary(self, summary: SummaryProposal) -> Validated:
        """A summary needs a verbatim anchor quote; the caller falls back to the offline summary otherwise."""
        location = locate_evidence(self.transcript, summary.evidence, summary.evidence_turn)
        if location is None:
            return Validated(False, "rejected_evidence_not_found", "the summary's quote is not a verbatim span of any turn")
        scope, where = self.summary_scope()
        first = self.transcript.turns[0].at if self.transcript.turns else self.transcript.started_at
        request = WriteRequest(
            type="episodic", content=summary.content, scope=scope, source_kind="session_summary",
            agent_id=self.transcript.agent_id, user_id=self.transcript.user_id, actor=self.actor,
            evidence=summary.evidence, session_id=self.transcript.session_id, tags=["session_summary"],
            event_at=first, source_ref=self.transcript.session_id, operation="extraction: session summary",
            evidence_verified=True, evidence_turn=location.turn.turn, dedupe=False,
        )
        return Validated(True, "valid", f"summary anchored in turn {location.turn.turn}; written to the {where}", request,
                         [location.note] if location.note else [])
