"""The search log: one ``search_log`` row per search, and rebuilding a response from it.

A row holds the request, the retrieval settings (by content hash: the settings themselves are
stored once in ``search_settings``) and embedder in force, the readable scopes with their
reasons, every stage's trace (ids, ranks, scores, decisions and reasons), the result
explanations, the response explanation and per-stage latency. The row is inserted once, with its
final timings, and its trace is compressed JSON (:func:`decode_row` reads every column back;
``generators`` lists are derived from the stage outputs rather than stored twice). It holds no record text: results
are rebuilt by id from the store, so a forgotten record shows as deleted and its text is gone
from the log too.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from ..errors import NotFoundError
from ..inputs import loggable
from ..settings import RetrievalSettings
from ..store.db import Store, dumps, dumps_compressed, loads
from ..store.paging import Where, select_page
from ..store.records import fetch_records
from .search_types import ResponseExplanation, ResultExplanation, SearchRequest, SearchResponse, SearchResult, SearchTrace, StageTrace
from .pipeline import SearchContext
from .scoring import truncate_to_tokens

LOG_STAGE = "log_write"


class LogStage:
    """Write the search's row, once, with its final timings (runs even when the search ended empty)."""

    name = LOG_STAGE
    always = True

    def run(self, ctx: SearchContext) -> SearchContext:
        began = time.perf_counter()
        req = ctx.request
        trace = {
            "stages": [s.to_dict() for s in ctx.stages if s.name != LOG_STAGE],
            "results": [e.to_dict() for e in ctx.explanations],
            "response": ctx.response_explanation.to_dict() if ctx.response_explanation else None,
        }
        scopes = {"readable": dict(ctx.access.readable), "ignored": dict(ctx.access.ignored)} if ctx.access else {}
        trace_blob = dumps_compressed(trace)
        result_ids = dumps([e.record_id for e in ctx.explanations])
        scopes_blob = dumps(scopes)
        # batched: on PostgreSQL the row goes to the server with BEGIN and COMMIT in one round trip
        with ctx.deps.store.batched_transaction() as conn:
            request = _request_blob(conn, ctx)
            # The row's own timings are taken last, inside the transaction, so it is written once
            # and still records what the log write cost (everything but the commit itself).
            ctx.log_ms = round((time.perf_counter() - began) * 1000.0, 3)
            stages = {s.name: s.ms for s in ctx.stages if s.name != LOG_STAGE} | {LOG_STAGE: ctx.log_ms}
            ctx.total_ms = ctx.elapsed_ms()
            conn.execute(
                "INSERT INTO search_log (id, at, agent_id, user_id, session_id, raw_query, rewritten_query, rewrite_status, "
                "request, scopes, trace, result_ids, empty_reason, stages, total_ms, origin) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (ctx.search_id, ctx.at, req.agent_id, req.user_id, req.session_id, req.query, ctx.rewritten_query,
                 ctx.rewrite_status, request, scopes_blob, trace_blob, result_ids, ctx.empty_reason, dumps(stages), ctx.total_ms, req.origin),
            )
        ctx.io(outputs={"search_id": ctx.search_id})
        return ctx


def settings_id(conn, settings: RetrievalSettings, at: str) -> str:
    """The content hash naming ``settings`` in ``search_settings`` (stored on first use)."""
    text, key = _settings_text(settings)
    # Always offered to the table (3 microseconds when present): a restore may have replaced it.
    conn.execute("INSERT OR IGNORE INTO search_settings (id, settings, first_used_at) VALUES (?,?,?)", (key, text, at))
    return key


_last_settings: tuple = (None, None, "", "")  # (settings object, its field values then, text, key)


def _settings_text(settings: RetrievalSettings) -> tuple[str, str]:
    """The settings as stored JSON and its hash, remembered for the last settings object seen.

    Every search of a service passes the same settings object, and dumping and hashing it was a
    tenth of the log write. Settings are mutable, so the remembered values are compared too; only
    settings whose fields are all scalars are remembered (a shallow copy is then a full snapshot).
    """
    global _last_settings
    obj, values, text, key = _last_settings
    if obj is settings and values == settings.__dict__:
        return text, key
    values = dict(settings.__dict__)
    text = dumps(settings.model_dump(mode="json"))
    key = hashlib.sha256(text.encode()).hexdigest()[:16]
    if all(isinstance(v, _SCALARS) for v in values.values()):
        _last_settings = (settings, values, text, key)  # one tuple, swapped whole: safe across threads
    return text, key


_SCALARS = (str, int, float, bool, type(None))


def _request_blob(conn, ctx: SearchContext) -> str:
    embedder = ctx.deps.embedder
    return dumps({"request": ctx.request.to_dict(), "settings_id": settings_id(conn, ctx.settings, ctx.at),
                  "embedder": {"model": embedder.model_name, "version": embedder.model_version}})


def log_failure(ctx: SearchContext, exc: BaseException) -> None:
    """A search that raised still gets its row: the stages it got through and the error."""
    req = ctx.request
    # The error may quote text that cannot be stored (a lone surrogate): the row is written anyway.
    error = loggable(f"search failed: {type(exc).__name__}: {exc}")
    trace = loggable({"stages": [s.to_dict() for s in ctx.stages], "results": [], "response": None, "error": error})
    with ctx.deps.store.transaction(()) as conn:  # an append: no scope locked
        conn.execute(
            "INSERT OR IGNORE INTO search_log (id, at, agent_id, user_id, session_id, raw_query, rewritten_query, rewrite_status, "
            "request, scopes, trace, result_ids, empty_reason, stages, total_ms, origin) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (ctx.search_id, ctx.at, req.agent_id, req.user_id, req.session_id, req.query, ctx.rewritten_query,
             ctx.rewrite_status, _request_blob(conn, ctx), dumps({}), dumps_compressed(trace), "[]", error,
             dumps({s.name: s.ms for s in ctx.stages}), ctx.elapsed_ms(), req.origin),
        )


def generator_lists(stages: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each generator's candidates in rank order as ``{"id", "rank", "score"}`` (cosine for dense,
    the lexical score for lexical, none for entity), read from the logged stage outputs."""
    out: dict[str, list[dict[str, Any]]] = {}
    by_name = {s.get("name"): s for s in stages}
    for name, key in (("dense", "cosine"), ("lexical", "lexical"), ("entity", None)):
        items = ((by_name.get(name) or {}).get("outputs") or {}).get("candidates") or []
        out[name] = [{"id": c["id"], "rank": c["rank"], "score": c.get(key) if key else None} for c in items]
    return out


def decode_trace(value) -> dict[str, Any]:
    """A logged ``trace`` column as a dict, with each generator's list (``generators``) derived
    from the stage outputs (the row does not store them twice)."""
    trace = loads(value, {}) or {}
    if "generators" not in trace:
        trace["generators"] = generator_lists(trace.get("stages") or [])
    return trace


def decode_request(store, value) -> dict[str, Any]:
    """A logged ``request`` column with its retrieval ``settings`` read back from ``search_settings``."""
    blob = loads(value, {}) or {}
    if "settings" not in blob and blob.get("settings_id"):
        text = store.scalar("SELECT settings FROM search_settings WHERE id = ?", (blob["settings_id"],))
        blob["settings"] = loads(text, {})
    return blob


def decode_row(store, row) -> dict[str, Any]:
    """A search_log row with every JSON column decoded and expanded (what log readers use)."""
    out = dict(row)
    out["request"] = decode_request(store, out.get("request"))
    out["trace"] = decode_trace(out.get("trace"))
    for column in ("scopes", "result_ids", "stages"):
        out[column] = loads(out.get(column), {} if column != "result_ids" else [])
    return out


def _row(store, search_id: str):
    row = store.query_one("SELECT * FROM search_log WHERE id = ?", (search_id,))
    if row is None:
        raise NotFoundError(f"no logged search {search_id}", search_id=search_id)
    return row


def logged_request(store: Store, search_id: str) -> tuple[SearchRequest, RetrievalSettings]:
    """The request and retrieval settings a logged search ran with (what a replay needs)."""
    blob = decode_request(store, _row(store, search_id)["request"])
    return SearchRequest.from_dict(blob["request"]), RetrievalSettings.model_validate(blob["settings"])


def load_search(store: Store, search_id: str) -> SearchResponse:
    """Rebuild a past search's response and trace from its log row.

    Records are read from the store as they are now (a forgotten record comes back deleted, with no
    text); everything else (ranks, scores, decisions, reasons, timings) is as logged.
    """
    row = _row(store, search_id)
    request_blob = decode_request(store, row["request"])
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
