"""One extraction attempt, end to end: transcript → extractor → reviewer → validator → writes.

Nothing is written until every candidate has been reviewed and validated. The writes of an
attempt (each accepted candidate through :meth:`Ingestor.write`, the session summary, the run's
``succeeded`` row, the candidate log and the attempt log) then happen in ONE SQLite transaction
that first re-checks the claim. A crash, a lost lease or any error before COMMIT rolls all of
it back, so a run never leaves partial results and a retry starts from a clean store; that is
simpler to reason about than idempotent per-candidate writes, and an attempt's writes are few
and local (no model call happens inside the transaction). A candidate that the write path
itself refuses (say, a permission or input error) is rolled back to a savepoint and logged,
without failing the run.

The extractor reads the transcript in parts when it is long (:mod:`.parts`), so no transcript is
too long to extract. A failed attempt is recorded with a reason a person can act on
(:mod:`.failures`): one another attempt may cure leaves the run queued for its next attempt, one
that would recur marks it failed at once.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass, field
from typing import Any

from ..clock import format_ts
from ..errors import ConflictError, MemoryCoreError
from ..text import quote_fold as fold
from ..ingest.timing import StageTimer
from ..ingest.writer import WriteRequest
from ..policy.rules import normalise_attribute
from ..store.db import dumps
from ..store.extract_queries import finish_run_succeeded, live_summary_id
from ..telemetry import spans
from . import failures, runs
from .base import build_extractor, build_reviewer, describe, load_transcript
from .candidates import Candidate, ReviewDecision, ReviewItem, SummaryProposal, Transcript
from .context import related_records
from .deps import ExtractionDeps
from .offline import offline_summary
from .parts import PartFailed, extract_in_parts
from .revision import apply_revision
from .validator import Validated, Validator, locate_evidence

log = logging.getLogger(__name__)


def default_worker_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass
class Item:
    """The life of one candidate within an attempt (becomes an extraction_candidates row)."""

    idx: int
    kind: str  # "fact" | "summary"
    original: Candidate
    evidence_turn: int | None = None
    evidence_role: str | None = None
    decision: ReviewDecision | None = None
    effective: Candidate | None = None
    validated: Validated | None = None
    outcome: str | None = None
    record_id: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def request(self) -> WriteRequest | None:
        return self.validated.request if self.validated and self.validated.ok and self.outcome is None else None

    def row(self) -> dict[str, Any]:
        candidate = {"kind": self.kind, **self.original.model_dump(mode="json", exclude_none=True)}
        review = self.decision.model_dump(mode="json", exclude_none=True) if self.decision else {}
        detail = dict(self.detail)
        if self.validated is not None:
            detail["validation"] = self.validated.to_dict()
        return {"idx": self.idx, "candidate": candidate, "verdict": self.decision.verdict if self.decision else None,
                "review": review, "outcome": self.outcome or "not_written", "record_id": self.record_id, "detail": detail}


def _summary_candidate(summary: SummaryProposal) -> Candidate:
    return Candidate(type="episodic", content=summary.content, evidence=summary.evidence, evidence_turn=summary.evidence_turn,
                     source_kind="agent_inference", tags=["session_summary"])


class ExtractionRunner:
    """Claims runs and processes them; shared by the worker loop and in-process "run now"."""

    def __init__(self, deps: ExtractionDeps, *, extractor=None, reviewer=None) -> None:
        self.deps = deps
        self.settings = deps.settings
        self.extractor = extractor or build_extractor(deps)
        self.reviewer = reviewer or build_reviewer(deps)

    # -- claiming ------------------------------------------------------------------------------

    def claim(self, worker_id: str, run_id: str | None = None) -> runs.Claim | None:
        return runs.claim(self.deps.store, self.deps.clock, worker_id, lease_s=self.settings.claim_timeout_s,
                          max_attempts=self.settings.max_attempts, run_id=run_id)

    def run_next(self, worker_id: str | None = None) -> runs.RunDetail | None:
        """Claim and process the oldest due run; None when nothing is claimable."""
        held = self.claim(worker_id or default_worker_id())
        if held is None:
            return None
        self.process(held)
        return runs.get_run(self.deps.store, held.run_id)

    def run(self, run_id: str, worker_id: str | None = None) -> runs.RunDetail:
        """Process one specific run now (it must be claimable: queued and due, or abandoned)."""
        held = self.claim(worker_id or default_worker_id(), run_id)
        if held is None:
            detail = runs.get_run(self.deps.store, run_id)
            raise ConflictError(f"run {run_id} cannot be claimed now (status {detail.status}, attempts {detail.run['attempts']})",
                                run_id=run_id, status=detail.status)
        self.process(held)
        return runs.get_run(self.deps.store, run_id)

    # -- one attempt ---------------------------------------------------------------------------

    def process(self, held: runs.Claim) -> str:
        """Run one claimed attempt; returns the run's status afterwards (or 'lease_lost')."""
        telemetry = self.deps.telemetry
        with spans.extraction(telemetry, held) as span:
            status = self._attempt(held)
            spans.extraction_done(span, status, lambda: runs.get_run(self.deps.store, held.run_id, held.attempt),
                                  held.attempt, telemetry)
        return status

    def _attempt(self, held: runs.Claim) -> str:
        deps = self.deps
        timer = StageTimer()
        detail: dict[str, Any] = {"worker_id": held.worker_id}
        for component in (self.extractor, self.reviewer):
            note = getattr(component, "fallback_note", None)
            if note:
                detail.setdefault("notes", []).append(note)
        items: list[Item] = []
        stage = "transcript_preparation"
        state = {"writes_started": False}
        lease = {"renew_after": deps.clock.now().timestamp() + self.settings.claim_timeout_s / 2}
        try:
            with timer.stage("transcript_preparation"):
                transcript = load_transcript(deps.store, held.session_id)
                access = deps.access(transcript.agent_id, transcript.user_id)
            detail["transcript"] = {"turns": len(transcript.turns), "user_turns": sum(t.role == "user" for t in transcript.turns),
                                    "chars": sum(len(t.content) for t in transcript.turns)}
            stage = "extractor"
            with timer.stage("extractor"):
                output, info = extract_in_parts(self.extractor, transcript, max_chars=self.settings.part_max_chars,
                                                cap=self.settings.max_candidates, between=lambda: self._keep_lease(held, lease))
            detail["extractor"] = info
            if info.get("dropped_over_limit"):
                detail["dropped_over_limit"] = info["dropped_over_limit"]
            proposed = output.candidates
            validator = Validator(deps.judge, transcript, access, held.run_id)
            items = [Item(i, "fact", c) for i, c in enumerate(proposed)]
            with timer.stage("evidence_check"):
                for item in items:
                    self._locate(item, transcript)
                summary_item = self._summary_item(len(items), output.summary, transcript, detail)
            stage = "review"
            with timer.stage("review"):
                for item in [*items, summary_item] if summary_item else items:
                    if item.outcome is None:
                        self._review(item, transcript, validator)
                        self._keep_lease(held, lease)
            stage = "candidate_validation"
            with timer.stage("candidate_validation"):
                for item in items:
                    if item.outcome is None and item.effective is not None:
                        item.validated = validator.validate(item.effective)
                        if not item.validated.ok:
                            item.outcome = item.validated.outcome
                self._consolidate(items)
                summary_request = self._summary_request(summary_item, transcript, validator, detail)
            stage = "writes"
            return self._write(held, items, summary_item, summary_request, access, timer, detail, state)
        except runs.LeaseLost as exc:
            self._after_rollback(state)
            self._record_failure(held, items, timer, detail, f"lease lost: {exc}", lease_lost=True)
            return "lease_lost"
        except Exception as exc:  # every failure is logged on the run with a reason a person can act on
            self._after_rollback(state)
            part = None
            if isinstance(exc, PartFailed):
                part, exc = exc.part, exc.error
            if not isinstance(exc, MemoryCoreError):
                log.error("extraction run %s attempt %s failed", held.run_id, held.attempt, exc_info=exc)
            again = failures.retryable(exc)
            detail["failed_stage"], detail["retryable"] = stage, again
            if part:
                detail["failed_part"] = part
            return self._record_failure(held, items, timer, detail, failures.describe(stage, exc, part), retryable=again)

    # -- steps ---------------------------------------------------------------------------------

    def _locate(self, item: Item, transcript: Transcript) -> None:
        location = locate_evidence(transcript, item.original.evidence, item.original.evidence_turn)
        if location is None:
            item.outcome = "rejected_evidence_not_found"
            item.detail["reason"] = "the evidence is not a verbatim span of any transcript turn; not sent to review"
            return
        item.evidence_turn, item.evidence_role = location.turn.turn, location.turn.role

    def _summary_item(self, idx: int, proposal: SummaryProposal | None, transcript: Transcript, detail: dict) -> Item | None:
        fallback = offline_summary(transcript)
        if proposal is not None and locate_evidence(transcript, proposal.evidence, proposal.evidence_turn) is None:
            detail["summary_fallback"] = "the extractor's summary quote is not verbatim; using the offline summary"
            proposal = fallback
        proposal = proposal or fallback
        if proposal is None:
            return None
        item = Item(idx, "summary", _summary_candidate(proposal))
        self._locate(item, transcript)
        return item

    def _review(self, item: Item, transcript: Transcript, validator: Validator) -> None:
        radius = self.settings.review_context_turns
        context = transcript.window(item.evidence_turn, radius) if item.evidence_turn is not None else []
        scope = validator.scope_for(item.original) if item.kind == "fact" else None
        related = related_records(self.deps.store, self.deps.search, transcript, item.original, scope, self.settings.related_records_limit) if item.kind == "fact" else []
        item.detail["related"] = [r["id"] for r in related]
        review_item = ReviewItem(item.idx, item.original, item.kind, item.evidence_role, item.evidence_turn, context, related, transcript)
        decision = self.reviewer.review(review_item)  # ExternalServiceError propagates: fail closed
        item.decision = decision
        if decision.verdict == "reject":
            item.outcome = "rejected_by_reviewer"
            return
        if decision.verdict == "revise":
            result = apply_revision(item.original, decision.revision)
            item.detail["revision"] = result.to_dict()
            if result.overrides:
                log.info("run candidate %s: reviewer revision overridden: %s", item.idx, "; ".join(result.overrides))
            if result.candidate is None:
                item.outcome = "rejected_revision_refused"
                return
            item.effective = result.candidate
            return
        item.effective = item.original

    def _consolidate(self, items: list[Item]) -> None:
        """Within one session the last word wins: drop repeats and facts the user corrected later on."""
        seen: dict[tuple, Item] = {}
        latest_by_subject: dict[tuple, Item] = {}
        for item in items:
            request = item.request
            if request is None:
                continue
            key = (request.scope.key, request.type, fold(item.effective.content))
            if key in seen:
                item.outcome = "duplicate_in_run"
                item.detail["duplicate_of"] = seen[key].idx
                continue
            seen[key] = item
            attribute = normalise_attribute(request.attribute)
            if request.type != "episodic" and attribute:
                subject = (request.scope.key, fold(request.about or ""), attribute)
                earlier = latest_by_subject.get(subject)
                if earlier is not None:
                    earlier.outcome = "corrected_in_run"
                    earlier.detail["corrected_by"] = item.idx
                latest_by_subject[subject] = item

    def _summary_request(self, item: Item | None, transcript: Transcript, validator: Validator, detail: dict) -> WriteRequest | None:
        with self.deps.store.lock:
            existing = live_summary_id(self.deps.store.conn, transcript.session_id)
        if existing:
            detail["summary"] = f"kept {existing}: the session already has a summary"
            if item is not None:
                item.outcome, item.record_id = "kept_existing", existing
            return None
        if item is None and not transcript.turns:
            # Nothing happened that a summary could tell (an MCP session, whose server never sees the
            # conversation, always ends like this): a record saying so would only clutter the store.
            detail["summary"] = "no turns: nothing to summarise, so no summary was written"
            return None
        if item is None:
            scope, where = validator.summary_scope()
            detail["summary"] = f"empty transcript; summary without a quote in the {where}"
            return WriteRequest(type="episodic", content=f"Session {transcript.session_id} between user {transcript.user_id} and agent "
                                f"{transcript.agent_id} ended with no turns.", scope=scope, source_kind="session_summary",
                                agent_id=transcript.agent_id, user_id=transcript.user_id, actor=validator.actor,
                                session_id=transcript.session_id, tags=["session_summary"], event_at=transcript.started_at,
                                source_ref=transcript.session_id, operation="extraction: session summary", dedupe=False)
        proposal = SummaryProposal(content=item.original.content, evidence=item.original.evidence, evidence_turn=item.original.evidence_turn)
        if item.outcome == "rejected_by_reviewer" or item.outcome == "rejected_revision_refused" or item.effective is None:
            detail["summary_fallback"] = f"the reviewer rejected the summary ({item.decision.reason if item.decision else 'no decision'}); using the offline summary"
            item.detail["replaced_by_offline_summary"] = True
            proposal = offline_summary(transcript)
            item.outcome = None
        elif item.effective.content != proposal.content:
            proposal = proposal.model_copy(update={"content": item.effective.content})
        item.validated = validator.validate_summary(proposal)
        if not item.validated.ok:
            item.outcome = item.validated.outcome
            item.validated = validator.validate_summary(offline_summary(transcript))
            item.outcome = None
        return item.validated.request

    def _write(self, held, items, summary_item, summary_request, access, timer: StageTimer, detail, state: dict) -> str:
        deps = self.deps
        now = format_ts(deps.clock.now())
        write_stages: dict[str, float] = {}
        rolled_back = False
        summary_id = summary_item.record_id if summary_item is not None else None
        with deps.store.transaction() as conn:
            if not runs.holds(conn, held):
                raise runs.LeaseLost(f"run {held.run_id} attempt {held.attempt} was taken over before its writes")
            state["writes_started"] = True
            with timer.stage("candidate_writes"):
                for item in items:
                    request = item.request
                    if request is None:
                        continue
                    mark = deps.store.savepoint(conn, "extraction_candidate")
                    try:
                        outcome = deps.write(request, access)
                    except MemoryCoreError as exc:
                        deps.store.rollback_to(conn, "extraction_candidate", mark)
                        rolled_back = True
                        item.outcome = "rejected_write"
                        item.detail["write_error"] = exc.to_dict()
                        continue
                    deps.store.release(conn, "extraction_candidate")
                    item.outcome, item.record_id = outcome.outcome, outcome.record.id
                    item.detail["write"] = {**outcome.to_tool_result(), "stages": outcome.stages, "ms": outcome.total_ms}
                    for name, ms in outcome.stages.items():
                        write_stages[name] = round(write_stages.get(name, 0.0) + ms, 3)
            if summary_request is not None:
                with timer.stage("summary_write"):
                    outcome = deps.write(summary_request, access)
                summary_id = outcome.record.id
                if summary_item is not None:
                    summary_item.outcome, summary_item.record_id = outcome.outcome, summary_id
                    summary_item.detail["write"] = {**outcome.to_tool_result(), "stages": outcome.stages, "ms": outcome.total_ms}
            detail["write_stages"] = write_stages
            detail["duplicate_and_contradiction_checks_ms"] = round(
                write_stages.get("duplicate_search", 0.0) + write_stages.get("contradiction_check", 0.0), 3)
            rows = [i.row() for i in items] + ([summary_item.row()] if summary_item is not None else [])
            detail["counts"] = _counts(rows)
            stages = {**timer.stages, "total": timer.total_ms()}
            finish_run_succeeded(conn, held.run_id, now=now, extractor=describe(self.extractor), reviewer=describe(self.reviewer),
                                 stages_json=dumps(stages), summary_record_id=summary_id)
            runs.log_candidates(conn, held, rows)
            runs.finish_attempt(conn, held, outcome="succeeded", at=now, error=None, extractor=describe(self.extractor),
                                reviewer=describe(self.reviewer), stages=stages, detail=detail)
            deps.store.append_event(conn, at=now, kind="extraction.succeeded", actor=f"worker:{held.worker_id}",
                                       payload={"run_id": held.run_id, "attempt": held.attempt, "summary_record_id": summary_id, **detail["counts"]})
        if rolled_back:
            deps.index.rebuild()
        return "succeeded"

    def _keep_lease(self, held: runs.Claim, lease: dict) -> None:
        """Renew the lease once half of it has passed; raises LeaseLost if another worker took the run."""
        now = self.deps.clock.now().timestamp()
        if now >= lease["renew_after"]:
            runs.renew(self.deps.store, self.deps.clock, held, self.settings.claim_timeout_s)
            lease["renew_after"] = now + self.settings.claim_timeout_s / 2

    def _after_rollback(self, state: dict) -> None:
        # The vector index may have applied rows of the rolled-back transaction; reload it.
        if state["writes_started"]:
            self.deps.index.rebuild()

    def _record_failure(self, held, items, timer: StageTimer, detail, message: str, lease_lost: bool = False,
                        retryable: bool = True) -> str:
        deps = self.deps
        now_dt = deps.clock.now()
        now = format_ts(now_dt)
        stages = {**timer.stages, "total": timer.total_ms()}
        for item in items:  # whatever _write recorded was rolled back with its transaction
            if item.outcome in ("created", "reinforced"):
                item.detail["rolled_back"] = {"outcome": item.outcome, "record_id": item.record_id}
                item.outcome, item.record_id = "rolled_back", None
        rows = [i.row() for i in items]
        with deps.store.transaction() as conn:
            status = "lease_lost"
            if not lease_lost and runs.holds(conn, held):
                runs.log_candidates(conn, held, rows)
                status, _ = runs.mark_failed_attempt(deps.store, conn, held, now_dt=now_dt, error=message,
                                                     backoff_s=self.settings.retry_backoff_s,
                                                     max_attempts=self.settings.max_attempts, retryable=retryable)
            runs.finish_attempt(conn, held, outcome="failed" if status != "lease_lost" else "lease_lost", at=now, error=message,
                                extractor=describe(self.extractor), reviewer=describe(self.reviewer), stages=stages, detail=detail)
        return status


def _counts(rows: list[dict]) -> dict[str, int]:
    facts = [r for r in rows if r["candidate"].get("kind") == "fact"]
    return {
        "proposed": len(facts),
        "accepted": sum(1 for r in facts if r["verdict"] in ("accept", "revise") and not r["outcome"].startswith("rejected_revision")),
        "rejected": sum(1 for r in facts if r["outcome"].startswith("rejected") or r["outcome"] in ("duplicate_in_run", "corrected_in_run")),
        "written": sum(1 for r in facts if r["outcome"] in ("created", "reinforced")),
        "created": sum(1 for r in facts if r["outcome"] == "created"),
        "reinforced": sum(1 for r in facts if r["outcome"] == "reinforced"),
    }
