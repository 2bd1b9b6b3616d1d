"""The pipeline wrapper: runs named stages in order, times each, and records its trace.

A stage is any object with a ``name`` and ``run(ctx) -> ctx``. Stages write what they saw and
produced through :meth:`SearchContext.io` and drop candidates only through
:meth:`SearchContext.drop`, which demands a reason; the wrapper checks that every candidate that
left the ranking during a stage was dropped that way. Once a stage halts the search (an empty
answer is known), the remaining stages are recorded as skipped, except those marked ``always``
(explanation and logging), which still run.
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Any, Protocol

import numpy as np

from ..clock import Clock
from ..embed.base import Embedder
from ..index.vector_index import VectorIndex
from ..policy.grants import ScopeAccess
from ..settings import RetrievalSettings
from ..store.db import Store
from ..telemetry import NO_TELEMETRY, Telemetry, spans
from .search_types import Candidate, ResponseExplanation, SearchRequest, StageTrace
from .rewrite import QueryRewriter


class PassageScorer(Protocol):
    """A reranker: one relevance score per passage for the query."""

    def score(self, query: str, passages: list[str]) -> list[float]: ...


class SearchServices(Protocol):
    """What the stages may use (the :class:`~memory_core.retrieve.retriever.Retriever` provides it).

    Stages get exactly this, never the service: the store, the vector index and embedder, access
    resolution, the rewriter and reranker, and the cache of readable term counts the lexical stage keeps.
    """

    store: Store
    index: VectorIndex
    embedder: Embedder
    clock: Clock

    def access(self, agent_id: str, user_id: str) -> ScopeAccess: ...

    def rewriter(self, settings: RetrievalSettings) -> QueryRewriter: ...

    def reranker(self, settings: RetrievalSettings) -> PassageScorer: ...

    def readable_term_counts(self, key: tuple) -> dict[str, int]:
        """A cache of readable term counts for one readable set in one store state (retrieve/lexical.py)."""
        ...

    def query_vector(self, text: str, settings: RetrievalSettings) -> tuple[np.ndarray, bool]:
        """The query's vector and whether the bounded query-vector cache supplied it."""
        ...

    def cached_query_vector(self, text: str, settings: RetrievalSettings) -> np.ndarray | None:
        """The query's vector if the bounded cache holds it, else None (never embeds)."""
        ...

    def query_vector_in_background(self, text: str, settings: RetrievalSettings) -> Future:
        """Start embedding ``text`` on a worker thread; the future gives ``(vector, milliseconds)``."""
        ...


class Stage(Protocol):
    name: str

    def run(self, ctx: "SearchContext") -> "SearchContext":
        """Do this stage's work on the context and return it."""
        ...


@dataclass
class SearchContext:
    """Everything one search carries between stages."""

    request: SearchRequest
    settings: RetrievalSettings
    deps: SearchServices
    search_id: str
    now: datetime
    at: str
    query: str = ""
    rewritten_query: str | None = None
    rewrite_status: str = "disabled"
    access: ScopeAccess | None = None
    scopes: list[str] = field(default_factory=list)
    filter: Any = None  # HardFilter
    mask: np.ndarray | None = None
    query_vec: np.ndarray | None = None
    pending_query_vec: Future | None = None  # the query vector being made on a worker thread (see wait_query_vector)
    entities: list[dict[str, str]] = field(default_factory=list)
    lexical: Any = None  # the lexical generator's LexicalResult (term statistics), if it ran
    unknown_names: list[str] = field(default_factory=list)  # capitalised query words no readable record holds
    rest_query: Any = None  # name_strip.RestQuery: the question without its known names, once computed
    rest_cover: Any = None  # rest_cover.RestCover: word-level support for the rest of such a question, once computed
    lexical_doclists: dict[str, Any] = field(default_factory=dict)  # term -> FTS5 doclist, reused by the lifecycle probe
    pool: dict[int, Candidate] = field(default_factory=dict)
    generated: dict[str, list[int]] = field(default_factory=dict)
    ranking: list[Candidate] = field(default_factory=list)
    results: list[Candidate] = field(default_factory=list)
    dropped: list[Candidate] = field(default_factory=list)
    floors_deferred: bool = False
    rerank_outcome: dict[str, Any] = field(default_factory=lambda: {"status": "disabled"})
    budget_used: int = 0
    gate_summary: dict[str, Any] = field(default_factory=dict)
    empty_reason: str | None = None
    halted: bool = False
    explanations: list[Any] = field(default_factory=list)
    response_explanation: ResponseExplanation | None = None
    stages: list[StageTrace] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    log_ms: float | None = None  # set by the log stage: its own time and the total, as written to the row
    total_ms: float | None = None
    _current: StageTrace | None = None

    # -- used by stages ------------------------------------------------------------------------

    def io(self, inputs: dict[str, Any] | None = None, outputs: dict[str, Any] | None = None) -> None:
        """Record what the running stage consumed and produced (ids and scores, never text)."""
        assert self._current is not None
        if inputs:
            self._current.inputs.update(inputs)
        if outputs:
            self._current.outputs.update(outputs)

    def note(self, text: str) -> None:
        assert self._current is not None
        self._current.notes.append(text)

    def skip(self, reason: str) -> None:
        """Mark the running stage as skipped (it did nothing), with why."""
        assert self._current is not None
        self._current.status = "skipped"
        self._current.notes.append(reason)

    def drop(self, candidate: Candidate, reason: str) -> None:
        """Remove ``candidate`` from the ranking, recording why (the only way to drop one)."""
        assert self._current is not None
        candidate.dropped_at = self._current.name
        candidate.dropped_reason = reason
        self._current.dropped.append({"id": candidate.record_id, "reason": reason})
        self.dropped.append(candidate)

    def halt(self, empty_reason: str) -> None:
        """The answer is empty: remember why; later stages are skipped unless they always run."""
        self.empty_reason = empty_reason
        self.halted = True

    def wait_query_vector(self) -> np.ndarray | None:
        """The query vector, waiting for the worker thread if it is still being made there.

        Called by the first stage that needs the vector (dense); the embedding's own time and how
        long this stage waited for it are written to the query_embedding stage's trace.
        """
        pending, self.pending_query_vec = self.pending_query_vec, None
        if pending is None:
            return self.query_vec
        embedding = next((t for t in self.stages if t.name == "query_embedding"), None)
        began = time.perf_counter()
        try:
            self.query_vec, embed_ms = pending.result()
        except BaseException as exc:  # the failure belongs to the embedding: say so in its trace
            if embedding is not None:
                embedding.status = "failed"
                embedding.notes.append(f"the query embedding failed on its worker thread: {type(exc).__name__}: {exc}")
            raise
        if embedding is not None:
            waited, where = round((time.perf_counter() - began) * 1000.0, 3), self._current.name if self._current else None
            embedding.outputs.update({"embedding_ms": round(embed_ms, 3), "waited_ms": waited, "waited_in": where})
            # (no times in the note: notes are compared across stores, times are in the outputs)
            embedding.notes.append(f"embedded on a worker thread while the lexical and entity stages ran; "
                                   f"{where or 'the next stage'} then waited for the vector (embedding_ms, waited_ms)")
        return self.query_vec

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000.0, 3)


class Pipeline:
    """Named stages run in order by :meth:`run`."""

    def __init__(self, stages: list[Stage], telemetry: Telemetry = NO_TELEMETRY) -> None:
        names = [s.name for s in stages]
        if len(set(names)) != len(names):
            raise ValueError(f"stage names must be unique: {names}")
        self.stages = stages
        self.telemetry = telemetry  # a search span, with one child span per stage, when the host traces

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.stages]

    def run(self, ctx: SearchContext) -> SearchContext:
        """Run every stage in order (see :meth:`step`); each is a child span of the search's span
        (memory_core/telemetry/spans.py), made from the trace the stage records."""
        with spans.search(self.telemetry, ctx) as search:
            for stage in self.stages:
                with spans.stage(search, stage.name, ctx):
                    ctx = self.step(stage, ctx)
            spans.search_done(search, ctx)
        return ctx

    @staticmethod
    def step(stage: Stage, ctx: SearchContext) -> SearchContext:
        """Run one stage under the wrapper: trace, timing, skip-after-halt and the drop check.

        Also how a single stage is run alone (a test, a notebook): build the context with
        ``Retriever.context`` and step through any stages, in any order.
        """
        trace = StageTrace(stage.name)
        ctx.stages.append(trace)
        if ctx.halted and not getattr(stage, "always", False):
            trace.status = "skipped"
            trace.notes.append(f"skipped: the search already ended empty ({ctx.empty_reason})")
            return ctx
        ctx._current = trace
        before = set(map(_RECORD_ID, ctx.ranking))
        dropped_before = len(ctx.dropped)
        began = time.perf_counter()
        try:
            ctx = stage.run(ctx)
        finally:
            trace.ms = round((time.perf_counter() - began) * 1000.0, 3)
            ctx._current = None
        if before:  # (the early stages have no ranking yet: nothing to check)
            unexplained = before.difference(map(_RECORD_ID, ctx.ranking))
            if unexplained:
                unexplained.difference_update(map(_RECORD_ID, ctx.dropped[dropped_before:]))
                if unexplained:
                    raise AssertionError(f"stage {stage.name} dropped {sorted(unexplained)} without a reason")
        return ctx


_RECORD_ID = attrgetter("record_id")
