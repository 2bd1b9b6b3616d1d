"""The search log: one ``search_log`` row per search, and rebuilding a response from it.

A row holds the request, the retrieval settings and embedder in force, the readable scopes with
their reasons, every stage's trace (ids, ranks, scores, decisions and reasons), the result
explanations, the response explanation and per-stage latency. It holds no record text: results
are rebuilt by id from the store, so a forgotten record shows as deleted and its text is gone
from the log too.
"""

from __future__ import annotations

from typing import Any

from ..errors import NotFoundError
from ..settings import RetrievalSettings
from ..store.db import Store, dumps, loads
from ..store.paging import Where, select_page
from ..store.records import fetch_records
from .search_types import ResponseExplanation, ResultExplanation, SearchRequest, SearchResponse, SearchResult, SearchTrace, StageTrace
from .pipeline import SearchContext
from .scoring import truncate_to_tokens

LOG_STAGE = "log_write"


class LogStage:
    """Write the search's row (runs even when the search ended empty)."""

    name = LOG_STAGE
    always = True

    def run(self, ctx: SearchContext) -> SearchContext:
        deps = ctx.deps
        req = ctx.request
        trace = {
            "generators": generator_lists(ctx),
            "stages": [s.to_dict() for s in ctx.stages if s.name != LOG_STAGE],
            "results": [e.to_dict() for e in ctx.explanations],
            "response": ctx.response_explanation.to_dict() if ctx.response_explanation else None,
        }
        request = {
            "request": req.to_dict(),
            "settings": ctx.settings.model_dump(mode="json"),
            "embedder": {"model": deps.embedder.model_name, "version": deps.embedder.model_version},
        }
        scopes = {"readable": dict(ctx.access.readable), "ignored": dict(ctx.access.ignored)} if ctx.access else {}
        stages = {s.name: s.ms for s in ctx.stages if s.name != LOG_STAGE}
        with deps.store.transaction() as conn:
            conn.execute(
                "INSERT INTO search_log (id, at, agent_id, user_id, session_id, raw_query, rewritten_query, rewrite_status, "
                "request, scopes, trace, result_ids, empty_reason, stages, total_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (ctx.search_id, ctx.at, req.agent_id, req.user_id, req.session_id, req.query, ctx.rewritten_query,
                 ctx.rewrite_status, dumps(request), dumps(scopes), dumps(trace),
                 dumps([e.record_id for e in ctx.explanations]), ctx.empty_reason, dumps(stages), ctx.elapsed_ms()),
            )
        ctx.io(outputs={"search_id": ctx.search_id})
        return ctx


def log_failure(ctx: SearchContext, exc: BaseException) -> None:
    """A search that raised still gets its row: the stages it got through and the error."""
    deps, req = ctx.deps, ctx.request
    error = f"search failed: {type(exc).__name__}: {exc}"
    trace = {"generators": {}, "stages": [s.to_dict() for s in ctx.stages], "results": [], "response": None, "error": error}
    request = {"request": req.to_dict(), "settings": ctx.settings.model_dump(mode="json"),
               "embedder": {"model": deps.embedder.model_name, "version": deps.embedder.model_version}}
    with deps.store.transaction() as conn:
        conn.execute(
            "INSERT OR IGNORE INTO search_log (id, at, agent_id, user_id, session_id, raw_query, rewritten_query, rewrite_status, "
            "request, scopes, trace, result_ids, empty_reason, stages, total_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (ctx.search_id, ctx.at, req.agent_id, req.user_id, req.session_id, req.query, ctx.rewritten_query,
             ctx.rewrite_status, dumps(request), dumps({}), dumps(trace), "[]", error,
             dumps({s.name: s.ms for s in ctx.stages}), ctx.elapsed_ms()),
        )


def generator_lists(ctx: SearchContext) -> dict[str, list[dict[str, Any]]]:
    """Each generator's candidates in rank order as ``{"id", "rank", "score"}`` (cosine for dense,
    the lexical score for lexical, none for entity), the shape log readers use."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name, attr in (("dense", "cosine"), ("lexical", "lexical"), ("entity", None)):
        items = []
        for rank, seq in enumerate(ctx.generated.get(name, []), start=1):
            cand = ctx.pool[seq]
            score = getattr(cand, attr) if attr else None
            items.append({"id": cand.record_id, "rank": rank, "score": round(score, 6) if score is not None else None})
        out[name] = items
    return out


def finish_log_row(store, search_id: str, stages: dict[str, float], total_ms: float) -> None:
    """Record the final timings (including the log write itself) on the row."""
    with store.transaction() as conn:
        conn.execute("UPDATE search_log SET stages = ?, total_ms = ? WHERE id = ?", (dumps(stages), total_ms, search_id))


def _row(store, search_id: str):
    row = store.query_one("SELECT * FROM search_log WHERE id = ?", (search_id,))
    if row is None:
        raise NotFoundError(f"no logged search {search_id}", search_id=search_id)
    return row


def logged_request(store: Store, search_id: str) -> tuple[SearchRequest, RetrievalSettings]:
    """The request and retrieval settings a logged search ran with (what a replay needs)."""
    blob = loads(_row(store, search_id)["request"], {})
    return SearchRequest.from_dict(blob["request"]), RetrievalSettings.model_validate(blob["settings"])


def load_search(store: Store, search_id: str) -> SearchResponse:
    """Rebuild a past search's response and trace from its log row.

    Records are read from the store as they are now (a forgotten record comes back deleted, with no
    text); everything else (ranks, scores, decisions, reasons, timings) is as logged.
    """
    row = _row(store, search_id)
    request_blob = loads(row["request"], {})
    trace_blob = loads(row["trace"], {})
    stages_ms = loads(row["stages"], {})
    stages = [StageTrace.from_dict(s) for s in trace_blob.get("stages", [])]
    if LOG_STAGE in stages_ms:
        stages.append(StageTrace(LOG_STAGE, ms=stages_ms[LOG_STAGE], outputs={"search_id": search_id}))
    trace = SearchTrace(search_id, stages, row["total_ms"])
    explanations = [ResultExplanation.from_dict(e) for e in trace_blob.get("results", [])]
    ids = [e.record_id for e in explanations]
    with store.lock:
        records = {r.id: r for r in fetch_records(store.conn, f"r.id IN ({','.join('?' * len(ids))})", ids)} if ids else {}
    overhead = request_blob.get("settings", {}).get("token_overhead_per_result", 0)
    results = []
    for explanation in explanations:
        record = records.get(explanation.record_id)
        content = record.content if record is not None and record.status != "deleted" else None
        if content is not None and explanation.truncated and explanation.tokens is not None:
            content = truncate_to_tokens(content, max(explanation.tokens - overhead, 1))
        results.append(SearchResult(record, content, explanation))
    response_blob = trace_blob.get("response")
    return SearchResponse(
        search_id=search_id, at=row["at"], request=SearchRequest.from_dict(request_blob.get("request", {})),
        results=results, explanation=ResponseExplanation.from_dict(response_blob) if response_blob else None,
        empty_reason=row["empty_reason"], trace=trace, total_ms=row["total_ms"], from_log=True,
    )


def list_searches(store: Store, *, agent_id: str | None = None, user_id: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """Recent logged searches, newest first (id, time, principal, query, result count, empty reason, ms)."""
    where = Where().equal("agent_id", agent_id).equal("user_id", user_id)
    rows = select_page(store, "id, at, agent_id, user_id, session_id, raw_query, rewritten_query, result_ids, empty_reason, total_ms",
                       "search_log", where, "seq DESC", limit)
    return [{**dict(r), "result_ids": loads(r["result_ids"], [])} for r in rows]
