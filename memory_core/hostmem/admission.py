"""Which searched records may be issued by the host, and the offline draft comparison.

Two layers, both always explained:

- :func:`hard_check` — rules no decider can override: the record must belong to this conversation
  (the user's own scope or this agent's private scope for the user; in a shared, project session
  only the project's scope), be confirmed (not an inference awaiting confirmation, not superseded,
  expired or deleted), be valid now, and be a fact or a procedure (episodes are the model's to
  search for). A model never sees a candidate that fails it.
- :class:`OfflineComparison` — the conservative rules that stand in for "does it improve the
  draft": the search gate accepted this record on its own signal, it holds one of the gap's own
  terms (lexical agreement), its cosine to the gap reaches ``min_cosine`` (dense agreement), and the
  conversation does not already say it (then the draft has it already).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..clock import parse_ts
from ..policy.scopes import private_scope
from .gaps import Gap, has_stem, words

ISSUABLE_TYPES = ("semantic", "procedural")
_STOP = frozenset(
    "a an the and or of to in on at for with by is are was were be been it its this that these those as from not no "
    "user user's they them their he she his her has have had does do did will would can could should about".split()
)


@dataclass
class Candidate:
    """One record a gap search returned, with what the decision needs."""

    record_id: str
    version: int
    content: str
    type: str
    scope: str
    status: str
    source_kind: str | None
    gap: Gap
    search_id: str
    cosine: float | None
    lexical: float | None
    gate: str
    valid_from: str | None = None
    valid_until: str | None = None
    expires_at: str | None = None
    score: float = 0.0
    admitted: bool = False
    reason: str = ""
    signals: dict[str, Any] = field(default_factory=dict)

    def to_log(self) -> dict[str, Any]:
        """The row shape of ``host_memory_decisions.candidates``."""
        return {"record_id": self.record_id, "version": self.version, "score": round(self.score, 6),
                "admitted": self.admitted, "reason": self.reason, "gap": self.gap.query, "search_id": self.search_id}


def candidate_from(result: dict[str, Any], record: Any, gap: Gap, search_id: str) -> Candidate:
    """A :class:`Candidate` from one memory_search tool result and the stored record."""
    why = result.get("why") or {}
    generators = why.get("generators") or {}
    dense = generators.get("dense") or {}
    lexical = generators.get("lexical") or {}
    return Candidate(
        record_id=record.id, version=record.version, content=result.get("content") or "", type=record.type,
        scope=record.scope, status=record.status, source_kind=record.source_kind, gap=gap, search_id=search_id,
        cosine=dense.get("cosine"), lexical=lexical.get("lexical"), gate=str(why.get("gate") or ""),
        valid_from=record.valid_from, valid_until=record.valid_until, expires_at=record.expires_at,
    )


def issuable_scopes(agent_id: str, user_id: str, project_id: str | None) -> tuple[str, ...]:
    """Scopes whose records the host may issue in this conversation (a project session is shared)."""
    if project_id:
        return (f"project:{project_id}",)
    return (f"user:{user_id}", private_scope(agent_id, user_id).key)


def hard_check(candidate: Candidate, *, scopes: tuple[str, ...], now: datetime) -> str | None:
    """Why ``candidate`` may never be host-issued here, or None when it may be considered."""
    if candidate.scope not in scopes:
        shared = len(scopes) == 1 and scopes[0].startswith("project:")
        return (f"scope {candidate.scope} is not this conversation's ({', '.join(scopes)})"
                + ("; a shared project session gets project memory only" if shared else ""))
    if candidate.status != "confirmed":
        return f"status {candidate.status}: only confirmed records are host-issued"
    if candidate.type not in ISSUABLE_TYPES:
        return f"type {candidate.type}: the host issues facts and procedures only"
    for label, value, later in (("expires", candidate.expires_at, True), ("valid until", candidate.valid_until, True),
                                ("valid from", candidate.valid_from, False)):
        when = parse_ts(value) if value else None
        if when is not None and ((later and when <= now) or (not later and when > now)):
            return f"{label} {value}: not valid now"
    return None


def informative_terms(text: str) -> set[str]:
    """Words of ``text`` that carry its claim (stop words and very short words left out)."""
    return {w for w in words(text) if len(w) > 2 and w not in _STOP}


def already_said(content: str, conversation: str, names: set[str]) -> bool:
    """Whether the conversation already holds most of what the record says (names aside)."""
    terms = informative_terms(content) - names
    if not terms:
        return True
    said = informative_terms(conversation)
    return len(terms & said) / len(terms) >= 0.8


@dataclass
class OfflineComparison:
    """The offline stand-in for the draft comparison: admit only on strong, agreeing signals."""

    min_cosine: float
    name: str = "offline-rules"

    def judge(self, candidate: Candidate, *, conversation: str, names: set[str]) -> tuple[bool, str]:
        """(admit, reason) for one candidate that passed :func:`hard_check`."""
        own = "; this record: " in candidate.gate and "alone is weak" not in candidate.gate
        held = has_stem([w for w in words(candidate.content) if w not in names], candidate.gap.focus)
        cosine = candidate.cosine if candidate.cosine is not None else -1.0
        candidate.signals = {"gate_own": own, "focus_held": held, "cosine": candidate.cosine}
        candidate.score = cosine
        if not own:
            return False, "the search gate did not accept this record on its own signal"
        if not held:
            return False, "holds none of the gap's own terms (no lexical agreement)"
        anchor = candidate.gap.anchor
        if anchor and not has_stem(words(candidate.content), (anchor,)):
            return False, "is not about the thing the turn asks about (the gap's anchor word is missing)"
        if cosine < self.min_cosine:
            return False, f"cosine {cosine:.3f} to the gap is below {self.min_cosine} (no dense agreement)"
        if already_said(candidate.content, conversation, names):
            return False, "the conversation already says this (the draft has it)"
        # the reason names counts, not the record's words: it is logged, and a forget must not miss it
        return True, (f"fills gap {candidate.gap.topic!r}: gate accepted it on its own signal, holds {len(held)} of the "
                      f"gap's terms, cosine {cosine:.3f} >= {self.min_cosine}, not in the conversation")
