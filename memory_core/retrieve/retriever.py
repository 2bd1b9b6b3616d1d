"""The retriever: checks a search request, runs the pipeline and returns the response.

One :class:`Retriever` per service (``service.retriever``). It is built from explicit parts (the
store, vector index, embedder, clock, access resolution, a settings getter and an optional model
client), holds the pipeline and the lazily loaded reranker, and reads the retrieval settings at
each call. It is the services the stages may use (:class:`~.services.SearchServices`).

Entry points: :meth:`Retriever.search` (one :class:`~.request.SearchRequest`, or its fields as
keywords) and :meth:`Retriever.search_batch` (many, batch-first: checked together, their query
vectors made in one embedder call); :meth:`Retriever.run` runs an already checked request.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from ..clock import Clock, format_ts
from ..embed.base import Embedder
from ..embed.cache import QueryVectorCache
from ..errors import InvalidInputError
from ..ids import new_id
from ..index.vector_index import VectorIndex
from ..llm import LanguageModel
from ..policy.grants import AccessResolver, ScopeAccess
from ..settings import RetrievalSettings
from ..store.db import Store
from ..telemetry import NO_TELEMETRY, Telemetry
from .budget import BudgetStage
from .collapse import CollapseStage
from .explain import ExplainStage
from .filters import HardFilterStage, ScopeStage
from .freshness import FreshnessStage
from .fuse import FusionStage
from .gate import GateStage
from .generate import DenseStage, EntityStage, LexicalStage, QueryEmbeddingStage, historical_candidates
from .pipeline import Pipeline, SearchRun, Stage
from .request import SearchRequest, check_as_of_time, check_origin
from .rerank import RerankStage, build_reranker
from .rewrite import QueryRewriter, RewriteStage
from .search_log import LogStage, load_search, log_failure, logged_request
from .search_types import SearchResponse, SearchResult, SearchTrace
from .services import PassageScorer
from .window import TimeWindowStage

# Worker threads for query embeddings made alongside the lexical and entity generators: a few, so
# concurrent searches from several threads do not queue behind one another's embeddings.
EMBED_WORKERS = 4
BATCH_EMBED = 64  # query texts per embedder call in a batch search


def default_stages() -> list[Stage]:
    """The stages in the design's order: the map of the search pipeline. The gate gets the
    generators' historical re-run for its lifecycle probe here: it never runs a generator itself."""
    return [
        RewriteStage(), ScopeStage(), HardFilterStage(), TimeWindowStage(), QueryEmbeddingStage(), LexicalStage(), EntityStage(),
        DenseStage(), FusionStage(), FreshnessStage(), GateStage(historical=historical_candidates), CollapseStage(), RerankStage(),
        BudgetStage(), ExplainStage(), LogStage(),
    ]


def build_pipeline(stages: list[Stage] | None = None, telemetry: Telemetry = NO_TELEMETRY) -> Pipeline:
    """A pipeline of ``stages`` (default: :func:`default_stages`); their declarations are checked."""
    return Pipeline(default_stages() if stages is None else stages, telemetry)


def _request(request: SearchRequest | None, params: dict[str, Any]) -> SearchRequest:
    if request is None:
        return SearchRequest(**params)
    if params:
        raise TypeError(f"pass a SearchRequest or its fields, not both (got {sorted(params)})")
    return request


class Retriever:
    """Runs memory searches over one store; the services its stages use (:class:`~.services.SearchServices`)."""

    def __init__(
        self, *, store: Store, index: VectorIndex, embedder: Embedder, clock: Clock, access: AccessResolver,
        settings: Callable[[], RetrievalSettings], llm: LanguageModel | None = None, reranker: PassageScorer | None = None,
        stages: list[Stage] | None = None, telemetry: Telemetry = NO_TELEMETRY,
    ) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.clock = clock
        self._access = access
        self._settings = settings
        self.pipeline = build_pipeline(stages, telemetry)
        self._llm = llm
        self._reranker = reranker
        self._reranker_key: tuple | None = ("injected",) if reranker is not None else None
        self._reranker_lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self._term_counts_key: tuple | None = None
        self._term_counts: dict[str, int] = {}
        self.query_vectors = QueryVectorCache(settings().query_cache_size)
        self._workers: ThreadPoolExecutor | None = None
        self._workers_pid = 0
        self._workers_lock = threading.Lock()

    # -- services the stages use ----------------------------------------------------------------

    @property
    def settings(self) -> RetrievalSettings:
        """The retrieval settings in force now."""
        return self._settings()

    def access(self, agent_id: str, user_id: str) -> ScopeAccess:
        return self._access(agent_id, user_id)

    def rewriter(self, settings: RetrievalSettings) -> QueryRewriter:
        return QueryRewriter(self._llm, settings.rewrite_timeout_s, settings.max_query_chars)

    def readable_term_counts(self, key: tuple) -> dict[str, int]:
        """The cache of readable term counts for one readable set in one store state (``key`` from
        :func:`.generate.lexical_score.lookup_key`); a new key starts an empty cache. Exact, never
        stale: any write changes the store's records version and so the key."""
        with self._stats_lock:
            if key != self._term_counts_key or len(self._term_counts) > 50_000:
                self._term_counts_key, self._term_counts = key, {}
            return self._term_counts

    def query_vector(self, text: str, settings: RetrievalSettings) -> tuple[np.ndarray, bool]:
        """The query's vector and whether it came from the bounded cache (bypassed when the
        settings in force set ``query_cache_size`` to 0)."""
        if settings.query_cache_size == 0 or self.query_vectors.max_entries == 0:
            return np.asarray(self.embedder.embed([text])[0], dtype=np.float32), False
        return self.query_vectors.vector(self.embedder, text)

    def cached_query_vector(self, text: str, settings: RetrievalSettings) -> np.ndarray | None:
        """The query's vector if the bounded cache holds it (and is in use), else None."""
        if settings.query_cache_size == 0:
            return None
        return self.query_vectors.cached(self.embedder, text)

    def query_vector_in_background(self, text: str, settings: RetrievalSettings) -> Future:
        """Embed ``text`` on a worker thread (the embedders' runtimes release the GIL while they
        compute); the future's result is ``(vector, milliseconds the embedding took)``."""

        def embed() -> tuple[np.ndarray, float]:
            began = time.perf_counter()
            vector, _ = self.query_vector(text, settings)
            return vector, (time.perf_counter() - began) * 1000.0

        return self._embed_workers().submit(embed)

    def _embed_workers(self) -> ThreadPoolExecutor:
        # Made again in a forked child: the parent's worker threads do not exist there, and an
        # executor that believes it has idle workers would never run the task.
        with self._workers_lock:
            if self._workers is None or self._workers_pid != os.getpid():
                self._workers = ThreadPoolExecutor(max_workers=EMBED_WORKERS, thread_name_prefix="memory-query-embed")
                self._workers_pid = os.getpid()
            return self._workers

    def close(self) -> None:
        """Stop the query-embedding worker threads (a later search starts them again)."""
        with self._workers_lock:
            workers, self._workers = self._workers, None
        if workers is not None and self._workers_pid == os.getpid():
            workers.shutdown(wait=True)

    def set_reranker(self, scorer) -> None:
        """Use ``scorer`` (anything with ``score(query, passages) -> list[float]``) as the reranker."""
        with self._reranker_lock:
            self._reranker, self._reranker_key = scorer, ("injected",)

    def reranker(self, settings: RetrievalSettings):
        """The reranker, loaded from ``reranker_model_path`` on first use."""
        with self._reranker_lock:
            if self._reranker_key == ("injected",):
                return self._reranker
            key = (settings.reranker_model_path, settings.reranker_max_length)
            if self._reranker is None or self._reranker_key != key:
                self._reranker = build_reranker(settings.reranker_model_path, settings.reranker_max_length)
                self._reranker_key = key
            return self._reranker

    def warm(self) -> None:
        """Load what the first search would otherwise load (embedder warm-up, reranker if enabled)."""
        self.embedder.embed(["warm up"])
        settings = self.settings
        if settings.reranker_enabled:
            self.reranker(settings)

    # -- searching ------------------------------------------------------------------------------

    def search(self, request: SearchRequest | None = None, /, *, settings: RetrievalSettings | None = None,
               **params: Any) -> SearchResponse:
        """Check one request (a :class:`SearchRequest`, or its fields as keywords) and run it.

        ``settings`` replaces the retrieval settings in force for this search only (the LoCoMo
        harness passes variants); raises InvalidInputError naming the bad field.
        """
        settings = settings or self.settings
        return self.run(_request(request, params).checked(settings), settings=settings)

    def search_batch(self, requests: Iterable[SearchRequest], *, settings: RetrievalSettings | None = None) -> list[SearchResponse]:
        """Many searches, batch-first, each run and logged as its own search (responses in order).

        Every request is checked before any runs: an invalid one raises InvalidInputError naming
        its position, and nothing is searched or logged. The distinct queries not yet in the
        query-vector cache are then embedded in batched embedder calls (a batched call may differ
        from a single one in the last bits of a float, below the 4-decimal rounding of cosines).
        """
        settings = settings or self.settings
        checked = []
        for position, request in enumerate(requests):
            try:
                checked.append(request.checked(settings))
                check_as_of_time(checked[-1], format_ts(self.clock.now()))
            except InvalidInputError as exc:
                raise InvalidInputError(f"requests[{position}]: {exc}", field=exc.details.get("field"), position=position) from exc
        size = min(BATCH_EMBED, self.query_vectors.max_entries) if settings.query_cache_size else 0  # 0: no cache to fill
        step = size or max(len(checked), 1)
        responses = []
        for start in range(0, len(checked), step):
            chunk = checked[start:start + step]
            if size:  # a query the rewriter may change is embedded when it is known
                self.query_vectors.prime(self.embedder, [r.query for r in chunk if not _rewrites(r, settings)])
            responses.extend(self.run(request, settings=settings) for request in chunk)
        return responses

    def start(self, request: SearchRequest, *, settings: RetrievalSettings | None = None) -> SearchRun:
        """A fresh run of a checked ``request`` (what :meth:`run` starts from; also for stepping
        stages one at a time with ``Pipeline.step``)."""
        now = self.clock.now()
        return SearchRun.start(self, request, settings or self.settings, new_id("srch"), now, format_ts(now))

    def run(self, request: SearchRequest, *, settings: RetrievalSettings | None = None) -> SearchResponse:
        """Run the pipeline for an already checked request (an as-of instant in the future of a
        memory-mode search raises InvalidInputError here, before anything is searched or logged)."""
        run = self.start(request, settings=settings)
        check_as_of_time(request, run.handoffs["at"])
        try:
            self.pipeline.run(run)
        except Exception as exc:
            if not any(stage.name == "log_write" and stage.status == "ran" for stage in run.stages):
                log_failure(self, run.handoffs, run.stages, run.elapsed_ms(), exc)
            raise
        out = run.handoffs
        # The response reports the timings the log row holds (written once, inside log_write).
        total = out.get("total_ms", run.elapsed_ms())
        for stage in run.stages:
            if stage.name == "log_write" and "log_ms" in out:
                stage.ms = out["log_ms"]
        results = [SearchResult(c.record, c.content, e) for c, e in zip(out.get("results", []), out.get("explanations", []))]
        return SearchResponse(
            search_id=out["search_id"], at=out["at"], request=request, results=results,
            explanation=out.get("response_explanation"), empty_reason=out.get("empty_reason"),
            trace=SearchTrace(out["search_id"], run.stages, total), total_ms=total,
        )

    def load(self, search_id: str) -> SearchResponse:
        """A logged search rebuilt from the search log (``from_log`` set)."""
        return load_search(self.store, search_id)

    def replay(self, search_id: str, *, logged_settings_too: bool = True, origin: str | None = "admin") -> SearchResponse:
        """Run a logged search again (same principal, query and options) against the store as it is now.

        With ``logged_settings_too`` the retrieval settings of the original run are used, so a
        difference in the answer comes from the store, not from configuration. The new search is
        logged too, with ``replay_of`` naming the original.
        """
        request, settings = logged_request(self.store, search_id)
        request.replay_of = search_id
        request.origin = check_origin(origin)
        return self.run(request, settings=settings if logged_settings_too else None)


def _rewrites(request: SearchRequest, settings: RetrievalSettings) -> bool:
    """Might the rewriter replace this request's query (so its vector is not known in advance)?"""
    enabled = settings.rewrite_enabled if request.rewrite is None else request.rewrite
    return bool(enabled and (request.context or "").strip())
