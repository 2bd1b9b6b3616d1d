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
from dataclasses import dataclass
from typing import Any

from ..errors import NotFoundError
from ..inputs import loggable
from ..policy.grants import ScopeAccess
from ..settings import RetrievalSettings
from ..store.db import Store, dumps, dumps_compressed, loads
from ..store.search_log_queries import insert_search, recent_searches, remember_settings, search_row, settings_text
from ..store.search_queries import records_by_id
from ..text import truncate_to_tokens
from .recorder import StageRecorder
from .request import SearchRequest
from .search_types import ResponseExplanation, ResultExplanation, SearchResponse, SearchResult, SearchTrace, StageTrace
from .services import SearchServices

LOG_STAGE = "log_write"


class LogStage:
    """Write the search's row, once, with its final timings (runs even when the search ended empty)."""

    name = LOG_STAGE
    always = True

    @dataclass(slots=True)
    class Inputs:
        request: SearchRequest
        settings: RetrievalSettings
        search_id: str
        at: str
        started: float
        trace: list[StageTrace]
        rewritten_query: str | None
        rewrite_status: str
        access: ScopeAccess
        explanations: list[ResultExplanation]
        response_explanation: ResponseExplanation
        empty_reason: str | None = None

    @dataclass(slots=True)
    class Outputs:
        log_ms: float  # this stage's own time, as written to the row (everything but the commit)
        total_ms: float  # the search's time, as written to the row

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        began = time.perf_counter()
        req = given.request
        trace = {
            "stages": [s.to_dict() for s in given.trace if s.name != LOG_STAGE],
            "results": [e.to_dict() for e in given.explanations],
            "response": given.response_explanation.to_dict(),
        }
        scopes = {"readable": dict(given.access.readable), "ignored": dict(given.access.ignored)}
        trace_blob = dumps_compressed(trace)
        result_ids = dumps([e.record_id for e in given.explanations])
        scopes_blob = dumps(scopes)
        # batched: on PostgreSQL the row goes to the server with BEGIN and COMMIT in one round trip
        with deps.store.batched_transaction() as conn:
            request = request_blob(conn, deps, req, given.settings, given.at)
            # The row's own timings are taken last, inside the transaction, so it is written once
            # and still records what the log write cost (everything but the commit itself).
            log_ms = round((time.perf_counter() - began) * 1000.0, 3)
            stages = {s.name: s.ms for s in given.trace if s.name != LOG_STAGE} | {LOG_STAGE: log_ms}
            total_ms = round((time.perf_counter() - given.started) * 1000.0, 3)
            insert_search(conn, {
                "id": given.search_id, "at": given.at, "agent_id": req.agent_id, "user_id": req.user_id,
                "session_id": req.session_id, "raw_query": req.query, "rewritten_query": given.rewritten_query,
                "rewrite_status": given.rewrite_status, "request": request, "scopes": scopes_blob, "trace": trace_blob,
                "result_ids": result_ids, "empty_reason": given.empty_reason, "stages": dumps(stages), "total_ms": total_ms,
                "origin": req.origin})
        rec.io(outputs={"search_id": given.search_id})
        return self.Outputs(log_ms, total_ms)


def settings_id(conn, settings: RetrievalSettings, at: str) -> str:
    """The content hash naming ``settings`` in ``search_settings`` (stored on first use)."""
    text, key = _settings_text(settings)
    remember_settings(conn, key, text, at)
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


def request_blob(conn, deps: SearchServices, request: SearchRequest, settings: RetrievalSettings, at: str) -> str:
    """The row's ``request`` column: the validated request, the settings' id and the embedder."""
    embedder = deps.embedder
    return dumps({"request": request.to_dict(), "settings_id": settings_id(conn, settings, at),
                  "embedder": {"model": embedder.model_name, "version": embedder.model_version}})


def log_failure(deps: SearchServices, handoffs: dict[str, Any], stages: list[StageTrace], elapsed_ms: float,
                exc: BaseException) -> None:
    """A search that raised still gets its row: the stages it got through and the error."""
    req: SearchRequest = handoffs["request"]
    # The error may quote text that cannot be stored (a lone surrogate): the row is written anyway.
    error = loggable(f"search failed: {type(exc).__name__}: {exc}")
    trace = loggable({"stages": [s.to_dict() for s in stages], "results": [], "response": None, "error": error})
    with deps.store.transaction(()) as conn:  # an append: no scope locked
        insert_search(conn, {
            "id": handoffs["search_id"], "at": handoffs["at"], "agent_id": req.agent_id, "user_id": req.user_id,
            "session_id": req.session_id, "raw_query": req.query, "rewritten_query": handoffs.get("rewritten_query"),
            "rewrite_status": handoffs.get("rewrite_status", "disabled"),
            "request": request_blob(conn, deps, req, handoffs["settings"], handoffs["at"]), "scopes": dumps({}),
            "trace": dumps_compressed(trace), "result_ids": "[]", "empty_reason": error,
            "stages": dumps({s.name: s.ms for s in stages}), "total_ms": elapsed_ms, "origin": req.origin}, if_absent=True)


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
        blob["settings"] = loads(settings_text(store, blob["settings_id"]), {})
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
    row = search_row(store, search_id)
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
    records = records_by_id(store, [e.record_id for e in explanations])
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
    rows = recent_searches(store, agent_id=agent_id, user_id=user_id, limit=limit)
    return [{**dict(r), "result_ids": loads(r["result_ids"], [])} for r in rows]
