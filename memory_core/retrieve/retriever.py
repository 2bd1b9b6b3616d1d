"""The retriever: validates a search request, runs the pipeline and returns the response.

One :class:`Retriever` per service (``service.retriever``). It is built from explicit parts (the
store, vector index, embedder, clock, access resolution, a settings getter and an optional model
client), holds the pipeline and the lazily loaded reranker, and reads the retrieval settings at
each call. It is what the stages see as ``ctx.deps`` (:class:`~.pipeline.SearchServices`).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any

import numpy as np

from ..clock import Clock, end_of_day as last_moment_of_day, format_ts, parse_ts
from ..embed.base import Embedder
from ..embed.cache import QueryVectorCache
from ..errors import InvalidInputError
from ..inputs import check_texts
from ..ids import new_id
from ..index.vector_index import VectorIndex
from ..llm import LanguageModel
from ..policy.grants import AccessResolver, ScopeAccess
from ..policy.scopes import validate_id
from ..settings import RetrievalSettings
from ..store.db import Store
from ..store.records import RECORD_TYPES
from ..telemetry import NO_TELEMETRY, Telemetry
from .explain import ExplainStage
from .filters import HardFilterStage, RewriteStage, ScopeStage
from .generators import DenseStage, EntityStage, LexicalStage, QueryEmbeddingStage
from .pipeline import PassageScorer, Pipeline, SearchContext, Stage
from .ranking import BudgetStage, CollapseStage, FreshnessStage, FusionStage, GateStage
from .rerank import RerankStage, build_reranker
from .rewrite import QueryRewriter
from .search_log import LogStage, load_search, log_failure, logged_request
from .search_types import SEARCH_ORIGINS, SearchRequest, SearchResponse, SearchResult, SearchTrace

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MAX_HINTS = 20
# Worker threads for query embeddings made alongside the lexical and entity generators: a few, so
# concurrent searches from several threads do not queue behind one another's embeddings.
EMBED_WORKERS = 4


def default_stages() -> list[Stage]:
    """The stages in the design's order: the map of the search pipeline."""
    return [
        RewriteStage(), ScopeStage(), HardFilterStage(), QueryEmbeddingStage(), LexicalStage(), EntityStage(),
        DenseStage(), FusionStage(), FreshnessStage(), GateStage(), CollapseStage(), RerankStage(), BudgetStage(),
        ExplainStage(), LogStage(),
    ]


def build_pipeline(stages: list[Stage] | None = None, telemetry: Telemetry = NO_TELEMETRY) -> Pipeline:
    """A pipeline of ``stages`` (default: :func:`default_stages`)."""
    return Pipeline(default_stages() if stages is None else stages, telemetry)


class Retriever:
    """Runs memory searches over one store; implements :class:`~.pipeline.SearchServices` for the stages."""

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

    # -- dependencies used by stages ------------------------------------------------------------

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
        :func:`.lexical.lookup_key`); a new key starts an empty cache. Exact, never stale: any write
        changes the store's records version and so the key."""
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

    def search(
        self, *, agent_id: str, user_id: str, query: str, types: list[str] | None = None,
        time_from: datetime | str | None = None, time_to: datetime | str | None = None,
        entity_hints: list[str] | None = None, limit: int | None = None, historical: bool = False,
        context: str | None = None, rewrite: bool | None = None, rerank: bool | None = None,
        session_id: str | None = None, settings: RetrievalSettings | None = None, origin: str | None = None,
    ) -> SearchResponse:
        """Validate the arguments and run the pipeline (see :meth:`MemoryService.search`)."""
        settings = settings or self.settings
        request = build_request(
            settings, agent_id=agent_id, user_id=user_id, query=query, types=types, time_from=time_from,
            time_to=time_to, entity_hints=entity_hints, limit=limit, historical=historical, context=context,
            rewrite=rewrite, rerank=rerank, session_id=session_id, origin=origin,
        )
        return self.run(request, settings=settings)

    def context(self, request: SearchRequest, *, settings: RetrievalSettings | None = None) -> SearchContext:
        """A fresh context for ``request`` (what :meth:`run` starts from; also for running stages alone)."""
        now = self.clock.now()
        return SearchContext(request=request, settings=settings or self.settings, deps=self, search_id=new_id("srch"),
                             now=now, at=format_ts(now))

    def run(self, request: SearchRequest, *, settings: RetrievalSettings | None = None) -> SearchResponse:
        """Run the pipeline for an already validated request."""
        ctx = self.context(request, settings=settings)
        try:
            ctx = self.pipeline.run(ctx)
        except Exception as exc:
            if not any(stage.name == "log_write" and stage.status == "ran" for stage in ctx.stages):
                log_failure(ctx, exc)
            raise
        # The response reports the timings the log row holds (written once, inside log_write).
        total = ctx.total_ms if ctx.total_ms is not None else ctx.elapsed_ms()
        for stage in ctx.stages:
            if stage.name == "log_write" and ctx.log_ms is not None:
                stage.ms = ctx.log_ms
        results = [SearchResult(c.record, c.content, e) for c, e in zip(ctx.results, ctx.explanations)]
        return SearchResponse(
            search_id=ctx.search_id, at=ctx.at, request=request, results=results,
            explanation=ctx.response_explanation, empty_reason=ctx.empty_reason,
            trace=SearchTrace(ctx.search_id, ctx.stages, total), total_ms=total,
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


def _timestamp(value: Any, name: str, end_of_day: bool) -> str | None:
    if value is None:
        return None
    try:
        parsed = parse_ts(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} is not an ISO-8601 date or time within the years 1-9999: {str(value)[:80]!r}", field=name) from exc
    if end_of_day and isinstance(value, str) and _DATE_ONLY.match(value.strip()):
        parsed = last_moment_of_day(parsed)  # not "+1 day": 9999-12-31 has no next day
    return format_ts(parsed)


def build_request(settings: RetrievalSettings, **args: Any) -> SearchRequest:
    """Check and normalise search arguments; raises InvalidInputError naming the bad field."""
    agent_id = validate_id(args["agent_id"], "agent_id")
    user_id = validate_id(args["user_id"], "user_id")
    session_id = args.get("session_id")
    if session_id is not None:
        validate_id(session_id, "session_id")
    origin = check_origin(args.get("origin"))
    query = args["query"]
    check_texts({"query": query, "entity_hints": args.get("entity_hints"), "context": args.get("context")})
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query must be a non-empty string", field="query")
    if len(query) > settings.max_query_chars:
        raise InvalidInputError(f"query is {len(query)} characters; the limit is {settings.max_query_chars}", field="query")
    types = args.get("types")
    if types is not None:
        if isinstance(types, str) or not all(t in RECORD_TYPES for t in types):
            raise InvalidInputError(f"types must be a list drawn from {', '.join(RECORD_TYPES)}", field="types")
        types = [t for t in RECORD_TYPES if t in types] or None
    time_from = _timestamp(args.get("time_from"), "time_from", end_of_day=False)
    time_to = _timestamp(args.get("time_to"), "time_to", end_of_day=True)
    if time_from and time_to and time_from > time_to:
        raise InvalidInputError("time_from is after time_to", field="time_from")
    hints = list(args.get("entity_hints") or [])
    if len(hints) > MAX_HINTS or not all(isinstance(h, str) and h.strip() and len(h) <= 200 for h in hints):
        raise InvalidInputError(f"entity_hints must be at most {MAX_HINTS} non-empty names of up to 200 characters", field="entity_hints")
    limit = args.get("limit")
    if limit is None:
        limit = min(settings.default_limit, settings.max_limit)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= settings.max_limit:
        raise InvalidInputError(f"limit must be an integer from 1 to {settings.max_limit}", field="limit")
    context = args.get("context")
    if context is not None:
        if not isinstance(context, str):
            raise InvalidInputError("context must be a string", field="context")
        context = context[-settings.rewrite_context_chars:] if settings.rewrite_context_chars else ""
    return SearchRequest(
        agent_id=agent_id, user_id=user_id, query=query, types=types, time_from=time_from, time_to=time_to,
        entity_hints=[h.strip() for h in hints], limit=limit, historical=bool(args.get("historical")), context=context,
        rewrite=args.get("rewrite"), rerank=args.get("rerank"), session_id=session_id, origin=origin,
    )



def check_origin(origin: Any) -> str | None:
    """``origin`` if it is None or one of SEARCH_ORIGINS, else InvalidInputError naming them."""
    if origin is not None and origin not in SEARCH_ORIGINS:
        raise InvalidInputError(f"origin must be one of {', '.join(SEARCH_ORIGINS)}; got {str(origin)[:40]!r}", field="origin")
    return origin
