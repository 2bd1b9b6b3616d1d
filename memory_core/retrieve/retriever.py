"""The retriever: validates a search request, runs the pipeline and returns the response.

One :class:`Retriever` per service (``retriever_for(service)``); it holds the pipeline, the lazily
loaded reranker and the rewriter's model client, and reads the retrieval settings at each call.
"""

from __future__ import annotations

import re
import threading
from datetime import datetime, timedelta
from typing import Any

from ..clock import format_ts, parse_ts
from ..errors import InvalidInputError
from ..ids import new_id
from ..policy.scopes import validate_id
from ..settings import RetrievalSettings
from ..store.records import RECORD_TYPES
from .explain import ExplainStage
from .filters import HardFilterStage, RewriteStage, ScopeStage
from .generators import DenseStage, EntityStage, LexicalStage, QueryEmbeddingStage
from .model import SearchRequest, SearchResponse, SearchResult, SearchTrace
from .pipeline import Pipeline, SearchContext
from .ranking import BudgetStage, CollapseStage, FreshnessStage, FusionStage, GateStage
from .rerank import RerankStage, build_reranker
from .rewrite import QueryRewriter
from .search_log import LogStage, finish_log_row, log_failure

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MAX_HINTS = 20


def build_pipeline() -> Pipeline:
    """The stages in the design's order."""
    return Pipeline([
        RewriteStage(), ScopeStage(), HardFilterStage(), QueryEmbeddingStage(), DenseStage(), LexicalStage(),
        EntityStage(), FusionStage(), FreshnessStage(), GateStage(), CollapseStage(), RerankStage(), BudgetStage(),
        ExplainStage(), LogStage(),
    ])


class Retriever:
    """Runs memory searches for one :class:`~memory_core.service.MemoryService`."""

    def __init__(self, service, *, reranker=None, llm=None) -> None:
        self.service = service
        self.store = service.store
        self.index = service.index
        self.embedder = service.embedder
        self.clock = service.clock
        self.pipeline = build_pipeline()
        self._llm = llm
        self._reranker = reranker
        self._reranker_key: tuple | None = None
        self._reranker_lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self._term_counts_key: tuple | None = None
        self._term_counts: dict[str, int] = {}

    @classmethod
    def from_service(cls, service) -> "Retriever":
        return cls(service)

    # -- dependencies used by stages ------------------------------------------------------------

    def access(self, agent_id: str, user_id: str):
        return self.service.access(agent_id, user_id)

    def rewriter(self, settings: RetrievalSettings) -> QueryRewriter:
        llm = self._llm if self._llm is not None else self.service.llm
        return QueryRewriter(llm, settings.rewrite_timeout_s, settings.max_query_chars)

    def readable_term_counts(self, key: tuple) -> dict[str, int]:
        """The cache of readable term counts for one readable set in one store state (``key`` from
        :func:`.lexical.lookup_key`); a new key starts an empty cache. Exact, never stale: any write
        changes the store's records version and so the key."""
        with self._stats_lock:
            if key != self._term_counts_key or len(self._term_counts) > 50_000:
                self._term_counts_key, self._term_counts = key, {}
            return self._term_counts

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
        settings = self.service.settings.retrieval
        if settings.reranker_enabled:
            self.reranker(settings)

    # -- searching ------------------------------------------------------------------------------

    def search(
        self, *, agent_id: str, user_id: str, query: str, types: list[str] | None = None,
        time_from: datetime | str | None = None, time_to: datetime | str | None = None,
        entity_hints: list[str] | None = None, limit: int | None = None, historical: bool = False,
        context: str | None = None, rewrite: bool | None = None, rerank: bool | None = None,
        session_id: str | None = None, settings: RetrievalSettings | None = None,
    ) -> SearchResponse:
        """Validate the arguments and run the pipeline (see :meth:`MemoryService.search`)."""
        settings = settings or self.service.settings.retrieval
        request = build_request(
            settings, agent_id=agent_id, user_id=user_id, query=query, types=types, time_from=time_from,
            time_to=time_to, entity_hints=entity_hints, limit=limit, historical=historical, context=context,
            rewrite=rewrite, rerank=rerank, session_id=session_id,
        )
        return self.run(request, settings=settings)

    def run(self, request: SearchRequest, *, settings: RetrievalSettings | None = None) -> SearchResponse:
        """Run the pipeline for an already validated request."""
        settings = settings or self.service.settings.retrieval
        now = self.clock.now()
        ctx = SearchContext(request=request, settings=settings, deps=self, search_id=new_id("srch"), now=now, at=format_ts(now))
        try:
            ctx = self.pipeline.run(ctx)
        except Exception as exc:
            if not any(stage.name == "log_write" and stage.status == "ran" for stage in ctx.stages):
                log_failure(ctx, exc)
            raise
        total = ctx.elapsed_ms()
        finish_log_row(self.store, ctx.search_id, {s.name: s.ms for s in ctx.stages}, total)
        results = [SearchResult(c.record, c.content, e) for c, e in zip(ctx.results, ctx.explanations)]
        return SearchResponse(
            search_id=ctx.search_id, at=ctx.at, request=request, results=results,
            explanation=ctx.response_explanation, empty_reason=ctx.empty_reason,
            trace=SearchTrace(ctx.search_id, ctx.stages, total), total_ms=total,
        )


def _timestamp(value: Any, name: str, end_of_day: bool) -> str | None:
    if value is None:
        return None
    try:
        parsed = parse_ts(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} is not an ISO-8601 date or time: {value!r}", field=name) from exc
    if end_of_day and isinstance(value, str) and _DATE_ONLY.match(value.strip()):
        parsed = parsed + timedelta(days=1) - timedelta(microseconds=1)
    return format_ts(parsed)


def build_request(settings: RetrievalSettings, **args: Any) -> SearchRequest:
    """Check and normalise search arguments; raises InvalidInputError naming the bad field."""
    agent_id = validate_id(args["agent_id"], "agent_id")
    user_id = validate_id(args["user_id"], "user_id")
    session_id = args.get("session_id")
    if session_id is not None:
        validate_id(session_id, "session_id")
    query = args["query"]
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
        rewrite=args.get("rewrite"), rerank=args.get("rerank"), session_id=session_id,
    )


def retriever_for(service) -> Retriever:
    """The service's retriever, built on first use."""
    return service.extension("retriever", Retriever.from_service)
