"""Write path: every record enters the store through :meth:`Ingestor.write`.

Explicit tool writes (path A), accepted extraction candidates (path B), revisions and host system
facts run the same named stages (:data:`BEFORE`, :data:`IN_TRANSACTION`, :data:`AFTER`), each
timed by :func:`memory_core.stages.run_stages`:

input_validation → permission_check → evidence_validation → content_embedding → (one transaction:)
entity_link_resolution → duplicate_search → contradiction_check → sqlite_transaction →
event_log_write → write-log row → COMMIT; (after commit:) vector_index_update.

A write commits once: its write-log row, with the stage timings up to then, is in the write's own
transaction, and the outcome (and the write's span) carry the same numbers. A refused write (any
MemoryCoreError) writes nothing but its write-log row; :meth:`Ingestor.attempt` returns it as a
:class:`WriteRefusal` (the refusing stage from the timer, never a flag on the exception).
"""

from __future__ import annotations

import logging

from ..clock import Clock, format_ts
from ..errors import MemoryCoreError
from ..index.vector_index import VectorIndex
from ..policy.grants import ScopeAccess
from ..policy.rules import Observation, normalise_attribute
from ..settings import WriteSettings
from ..stages import Stage, StageTimer, run_stages
from ..store.db import Store
from ..store.records import Record
from ..telemetry import NO_TELEMETRY, Telemetry, spans
from . import write_stages as ws
from .write_types import WriteContext, WriteOutcome, WriteRefusal, WriteRequest  # noqa: F401 (WriteRequest, WriteOutcome: public here)
from .procedures import load_procedure
from .write_log import candidate_of, clip, insert_log_row, refusal_validation

log = logging.getLogger(__name__)


BEFORE = (
    Stage("input_validation", ws.validate_input, "types, sizes, dates and the procedure's fields"),
    Stage("permission_check", ws.check_permission, "the principal may write to the resolved scope"),
    Stage("evidence_validation", ws.check_evidence, "quote located in the transcript and entailing the content"),
    Stage("content_embedding", ws.embed_content, "one embedding, used for duplicates and stored"),
)
IN_TRANSACTION = (
    Stage("entity_link_resolution", ws.resolve_entities, "primary entity and mentions by exact alias"),
    Stage("duplicate_search", ws.find_duplicate, "an existing record stating the same claim is reinforced"),
    Stage("contradiction_check", ws.check_contradictions, "same subject, other claim: supersede by rank or conflict"),
    Stage("sqlite_transaction", ws.persist, "record, links, FTS row, change feed, lineage and conflicts"),
    Stage("event_log_write", ws.append_events, "events for the record and those it superseded"),
)
AFTER = (Stage("vector_index_update", ws.update_index, "apply the change feed to this process's matrix"),)


def write_scopes(req: WriteRequest) -> set[str]:
    """The owner scopes a write decides on: the one it writes to and, for a revision, the revised record's."""
    scopes = {req.scope.key}
    if req.revises is not None:
        scopes.add(req.revises.scope)
    return scopes


class Ingestor:
    """Validates and writes records; the only code that inserts into ``records``."""

    def __init__(self, store: Store, index: VectorIndex, embedder, judge, settings: WriteSettings, clock: Clock,
                 telemetry: Telemetry = NO_TELEMETRY) -> None:
        self.telemetry = telemetry  # one span per write when the host traces (telemetry/spans.py)
        self.store = store
        self.index = index
        self.embedder = embedder
        self.judge = judge
        self.settings = settings
        self.clock = clock

    def write(self, req: WriteRequest, access: ScopeAccess) -> WriteOutcome:
        """Write (or reinforce) one record; raises MemoryCoreError subclasses and writes nothing on
        error except the refusal's write-log row."""
        result = self.attempt(req, access)
        if isinstance(result, WriteRefusal):
            raise result.error
        return result

    def attempt(self, req: WriteRequest, access: ScopeAccess) -> WriteOutcome | WriteRefusal:
        """:meth:`write`, with a refusal returned (already in the write log) instead of raised."""
        timer = StageTimer()
        with spans.write(self.telemetry, req) as span:
            try:
                result = self._write(req, access, timer)
            except Exception:  # a bug, not a refusal: it propagates, and the span names the stage it came from
                spans.stage_failed(span, timer.failed)
                raise
            if isinstance(result, WriteRefusal):
                spans.write_refused(span, result.error, result.stage)
            else:
                spans.write_done(span, req, result)
        return result

    def _write(self, req: WriteRequest, access: ScopeAccess, timer: StageTimer) -> WriteOutcome | WriteRefusal:
        ctx = WriteContext(req=req, access=access, now=self.clock.now(), ingestor=self, source_kind=req.source_kind)
        try:
            run_stages(BEFORE, ctx, timer)
            # One transaction, one commit: it locks the scope written to (and a revised record's), so
            # writers of other scopes never wait, and holds the write-log row with the stage timings.
            with self.store.transaction(write_scopes(req)) as conn:
                ctx.conn = conn
                ws.start_same_fact_read(ctx)  # sends nothing: it travels with the first statement
                run_stages(IN_TRANSACTION, ctx, timer)
                result = ctx.outcome
                assert result is not None
                # taken once: the log row, the outcome and the write's span carry the same numbers
                result.stages, result.total_ms = dict(timer.stages), timer.total_ms()
                self._log(conn, ctx)
            ctx.conn = None
        except MemoryCoreError as exc:
            return WriteRefusal(exc, timer.failed, self._log_refusal_of(req, exc, timer))
        run_stages(AFTER, ctx, StageTimer())  # after the commit: a cache refresh, not part of the logged write
        return result

    # -- the write log ----------------------------------------------------------------------------

    def _log(self, conn, ctx: WriteContext) -> None:
        """The write-log row of a write that succeeded, in its transaction, with the outcome's timings."""
        result = ctx.outcome
        assert result is not None
        validation = {**ctx.validation, "outcome": result.outcome, "summary": result.summary, "notes": result.notes,
                      "superseded": result.superseded, "conflicts_with": result.conflicts_with,
                      "claim_comparisons": ctx.match.compared if ctx.match is not None else []}
        req = ctx.req
        insert_log_row(
            conn, at=format_ts(self.clock.now()), operation=req.operation, agent_id=req.agent_id, user_id=req.user_id,
            session_id=req.session_id, actor=req.actor, outcome=result.outcome, record_id=result.record.id,
            status=result.record.status, source_kind=result.record.source_kind, candidate=candidate_of(req),
            validation=validation, stages=result.stages, total_ms=result.total_ms, seq_needed=False,
        )

    def _log_refusal_of(self, req: WriteRequest, exc: MemoryCoreError, timer: StageTimer) -> bool:
        """Log a refused write; False if even that failed (the refusal is what the caller must see)."""
        target = req.revises.id if req.revises is not None else None
        try:
            self.log_refusal(
                operation=req.operation, agent_id=req.agent_id, user_id=req.user_id, session_id=req.session_id, actor=req.actor,
                candidate=clip(candidate_of(req)), error=exc, stage=timer.failed, record_id=target,
                stages=dict(timer.stages), total_ms=timer.total_ms(),
            )
        except Exception:
            log.exception("could not log a refused write")
            return False
        return True

    def log_refusal(self, *, operation: str, agent_id: str | None, user_id: str | None, session_id: str | None, actor: str,
                    candidate: dict, error: Exception, stage: str | None = None, record_id: str | None = None,
                    stages: dict | None = None, total_ms: float = 0.0) -> int:
        """Record a refused write attempt (nothing else is written); returns the log row's seq."""
        with self.store.transaction(()) as conn:  # an append: no scope locked
            return insert_log_row(
                conn, at=format_ts(self.clock.now()), operation=operation, agent_id=agent_id, user_id=user_id,
                session_id=session_id, actor=actor, outcome="refused", record_id=record_id, status=None, source_kind=None,
                candidate=clip(candidate), validation=refusal_validation(error, stage), stages=stages or {}, total_ms=total_ms,
            )

    def procedure(self, record_id: str) -> dict | None:
        """The procedure row of a procedural record (None if it has none)."""
        with self.store.lock:
            return load_procedure(self.store.conn, record_id)

    # -- reinforcement helpers used by the stages ---------------------------------------------------

    @staticmethod
    def observation_for(ctx: WriteContext) -> Observation:
        """A write restating an existing claim, as an observation of it."""
        req = ctx.req
        # Only what the user or a tool said counts as evidence: an agent quoting itself does not.
        evidenced = bool(req.evidence) and ctx.evidence_role in ("user", "tool")
        return Observation(session_id=req.session_id, agent_id=req.agent_id, source_kind=ctx.source_kind, evidenced=evidenced)

    @staticmethod
    def attribute_of(req: WriteRequest) -> str | None:
        if req.procedure and not req.attribute:
            return normalise_attribute(str(req.procedure.get("name") or ""))
        return normalise_attribute(req.attribute)
