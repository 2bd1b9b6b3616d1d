"""Bulk writes: :func:`write_many` runs every rule of :meth:`Ingestor.write` on many requests at once.

A batch costs one embedding call and one transaction instead of one of each per record. Inside
the transaction each request runs the same in-transaction stages as a single write, under a
savepoint of its own: a request refused there (bad input, a policy refusal) rolls back to its
savepoint and is reported, while the others stand. Anything that is not a refusal (a crash, a
killed process) rolls the whole batch back: nothing of it is ever half-written.

Requests later in a batch see the earlier ones as a single write would see records committed
before it: a repeat reinforces the record an earlier request created, a newer claim on the same
subject supersedes it. The vector index is not refreshed inside the transaction (it would read
rows that may yet be rolled back); :class:`BatchIndex` answers for the batch's own new records.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..clock import format_ts, parse_ts
from ..errors import MemoryCoreError
from ..policy.grants import ScopeAccess
from ..stages import StageTimer, run_stages
from .procedures import embedding_text
from .write_log import candidate_of, clip, insert_log_row, refusal_validation
from .write_types import WriteContext, WriteOutcome, WriteRequest
from .writer import BEFORE, IN_TRANSACTION

DEFAULT_BATCH_SIZE = 500  # requests per embedding call and transaction


@dataclass
class BatchItemResult:
    """What became of one request of a batch: an outcome, or the refusal that stopped it."""

    position: int
    outcome: WriteOutcome | None = None
    error: MemoryCoreError | None = None
    stage: str | None = None  # the stage that refused it

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """The tool-result form of the outcome, or ``{"ok": False, "error": {...}}`` with the refusing stage."""
        if self.outcome is not None:
            return {"position": self.position, **self.outcome.to_tool_result()}
        assert self.error is not None
        return {"position": self.position, "ok": False, "error": self.error.to_dict(),
                "stage": self.stage}


class BatchIndex:
    """The vector index as one batch sees it: the committed index plus the batch's new records.

    Offers the three calls the duplicate search makes (``refresh``, ``similarity``, ``mask`` /
    ``search``); a candidate's status is read again from the transaction by the caller.
    """

    def __init__(self, base) -> None:
        self.base = base
        self._seqs: list[int] = []
        self._vectors: list[np.ndarray] = []
        self._keys: list[tuple[str, str]] = []  # (scope key, type) of each new record

    def add(self, seq: int, vector, scope_key: str, record_type: str) -> None:
        """A record this batch created (at its savepoint's release)."""
        v = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(v)) or 1.0
        self._seqs.append(seq)
        self._vectors.append(v / norm)
        self._keys.append((scope_key, record_type))

    def refresh(self) -> int:
        return 0  # refreshed once before the batch and once after its commit

    def _cosines(self, query, positions: list[int]) -> list[float]:
        q = np.asarray(query, dtype=np.float32)
        q = q / (float(np.linalg.norm(q)) or 1.0)
        return [float(self._vectors[i] @ q) for i in positions]

    def similarity(self, query, seqs: list[int]) -> dict[int, float]:
        mine = {seq: i for i, seq in enumerate(self._seqs)}
        out = self.base.similarity(query, [s for s in seqs if s not in mine]) if any(s not in mine for s in seqs) else {}
        wanted = [mine[s] for s in seqs if s in mine]
        out.update(zip([self._seqs[i] for i in wanted], self._cosines(query, wanted)))
        return out

    def mask(self, scopes, statuses, types=None):
        return (self.base.mask(scopes, statuses, types), set(scopes), set(types) if types else None)

    def search(self, query, k: int, allowed) -> list[tuple[int, float]]:
        base_mask, scopes, types = allowed
        found = dict(self.base.search(query, k, base_mask))
        positions = [i for i, (scope, kind) in enumerate(self._keys) if scope in scopes and (types is None or kind in types)]
        for i, cosine in zip(positions, self._cosines(query, positions)):
            found[self._seqs[i]] = cosine
        return sorted(found.items(), key=lambda item: -item[1])[:k]


def write_many(ingestor, requests: Sequence[WriteRequest], access: ScopeAccess | Sequence[ScopeAccess], *,
               batch_size: int = DEFAULT_BATCH_SIZE, dry_run: bool = False,
               progress: Callable[[int, int], None] | None = None) -> list[BatchItemResult]:
    """Write ``requests`` in batches of ``batch_size``; one result per request, in order.

    ``access`` is one principal's for every request or one per request. With ``dry_run`` every
    batch runs to its end and is rolled back: the results say what would have happened, and the
    store is unchanged (not even its write log). ``progress(done, total)`` is called after each
    request, inside its batch's transaction.
    """
    accesses = list(access) if isinstance(access, (list, tuple)) else [access] * len(requests)
    if len(accesses) != len(requests):
        raise ValueError("write_many needs one access per request (or one for all)")
    results: list[BatchItemResult] = []
    for start in range(0, len(requests), max(1, batch_size)):
        chunk = list(zip(range(start, start + batch_size), requests[start:start + batch_size], accesses[start:start + batch_size]))
        results.extend(_write_batch(ingestor, chunk, len(requests), dry_run, progress))
    return results


class _DryRun(Exception):
    """Raised at the end of a dry-run batch to roll its transaction back."""


def _write_batch(ingestor, chunk, total: int, dry_run: bool, progress) -> list[BatchItemResult]:
    before = [stage for stage in BEFORE if stage.name != "content_embedding"]
    ingestor.index.refresh()
    view = copy.copy(ingestor)
    view.index = BatchIndex(ingestor.index)
    now = ingestor.clock.now()
    items: list[tuple[int, WriteContext | None, StageTimer, MemoryCoreError | None]] = []
    for position, req, access in chunk:
        timer = StageTimer()
        at = parse_ts(req.imported.fields.get("created_at")) if req.imported is not None else None
        ctx = WriteContext(req=req, access=access, now=at or now, ingestor=view, source_kind=req.source_kind)
        try:
            run_stages(before, ctx, timer)
            items.append((position, ctx, timer, None))
        except MemoryCoreError as exc:
            items.append((position, ctx, timer, exc))
    ready = [ctx for _, ctx, _, error in items if error is None]
    if ready:  # the batch's one embedding call, its time shared among the requests
        clock = StageTimer()
        history = [v for c in ready if c.req.imported is not None for v in c.req.imported.history]
        with clock.stage("content_embedding"):
            vectors = ingestor.embedder.embed([embedding_text(c.req.content, c.req.procedure) for c in ready]
                                              + [embedding_text(v["content"], v.get("_procedure")) for v in history])
        for version, vector in zip(history, vectors[len(ready):]):
            version["_vector"] = vector
        share = round(clock.stages["content_embedding"] / len(ready), 3)
        for (_, ctx, timer, error), vector in zip([i for i in items if i[3] is None], vectors):
            ctx.vector = vector
            timer.stages["content_embedding"] = share
    results: list[BatchItemResult] = []
    try:
        with ingestor.store.transaction() as conn:
            for done, (position, ctx, timer, error) in enumerate(items, 1):
                if error is None:
                    error = _write_one(view, conn, ctx, timer, IN_TRANSACTION)
                if error is not None:
                    _log_refusal(ingestor, conn, ctx.req, error, timer)
                    results.append(BatchItemResult(position, error=error, stage=timer.failed))
                else:
                    results.append(BatchItemResult(position, outcome=ctx.outcome))
                if progress is not None:
                    progress(chunk[0][0] + done, total)
            if dry_run:
                raise _DryRun()
    except _DryRun:
        pass
    if not dry_run:
        ingestor.index.refresh()
    return results


def _write_one(view, conn, ctx: WriteContext, timer: StageTimer, stages) -> MemoryCoreError | None:
    """The in-transaction stages of one request under a savepoint; a refusal undoes only them."""
    mark = view.store.savepoint(conn, "batch_item")
    ctx.conn = conn
    try:
        if ctx.req.imported is not None and ctx.req.imported.prepare is not None:
            ctx.req.imported.prepare(conn, ctx)
        run_stages(stages, ctx, timer)
        outcome = ctx.outcome
        assert outcome is not None
        outcome.stages, outcome.total_ms = dict(timer.stages), timer.total_ms()
        view._log(conn, ctx)
    except MemoryCoreError as exc:
        view.store.rollback_to(conn, "batch_item", mark)
        ctx.conn = None
        return exc
    except BaseException:
        ctx.conn = None
        raise
    view.store.release(conn, "batch_item")
    ctx.conn = None
    record = ctx.outcome.record
    if ctx.outcome.outcome == "created" and record.seq is not None:
        view.index.add(record.seq, ctx.vector, record.scope, record.type)
    return None


def _log_refusal(ingestor, conn, req: WriteRequest, exc: MemoryCoreError, timer: StageTimer) -> None:
    target = req.revises.id if req.revises is not None else None
    insert_log_row(
        conn, at=format_ts(ingestor.clock.now()), operation=req.operation, agent_id=req.agent_id, user_id=req.user_id,
        session_id=req.session_id, actor=req.actor, outcome="refused", record_id=target, status=None, source_kind=None,
        candidate=clip(candidate_of(req)), validation=refusal_validation(exc, timer.failed),
        stages=dict(timer.stages), total_ms=timer.total_ms(),
    )
