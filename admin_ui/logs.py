"""The search log, write log and event log: filtered pages and single entries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_core.store.db import loads

from .pagination import Page, page_bounds
from .queries import _like


@dataclass
class LogFilter:
    """Filters shared by the three logs; each log uses the ones that apply to it."""

    agent_id: str | None = None
    user_id: str | None = None
    text: str | None = None
    kind: str | None = None
    actor: str | None = None
    record_id: str | None = None
    outcome: str | None = None
    empty_only: bool = False
    since: str | None = None
    until: str | None = None


def _time_clauses(flt: LogFilter, clauses: list[str], params: list[Any], column: str = "at") -> None:
    if flt.since:
        clauses.append(f"{column} >= ?")
        params.append(flt.since)
    if flt.until:
        clauses.append(f"{column} < ?")
        params.append(flt.until)


def _page(service, table: str, columns: str, clauses: list[str], params: list[Any], page: int, page_size: int) -> Page:
    where = " AND ".join(clauses) or "1=1"
    total = service.store.scalar(f"SELECT COUNT(*) FROM {table} WHERE {where}", params) or 0
    page, offset = page_bounds(page, page_size, total)
    rows = service.store.query(f"SELECT {columns} FROM {table} WHERE {where} ORDER BY seq DESC LIMIT ? OFFSET ?",
                               [*params, page_size, offset])
    return Page([dict(r) for r in rows], total, page, page_size)


def search_log(service, flt: LogFilter, page: int = 1, page_size: int = 50) -> Page:
    clauses: list[str] = []
    params: list[Any] = []
    if flt.agent_id:
        clauses.append("agent_id = ?")
        params.append(flt.agent_id)
    if flt.user_id:
        clauses.append("user_id = ?")
        params.append(flt.user_id)
    if flt.text and flt.text.strip():
        clauses.append("(raw_query LIKE ? ESCAPE '\\' OR id = ?)")
        params += [_like(flt.text.strip()), flt.text.strip()]
    if flt.empty_only:
        clauses.append("result_ids = '[]'")
    _time_clauses(flt, clauses, params)
    page_ = _page(service, "search_log", "seq, id, at, agent_id, user_id, raw_query, result_ids, empty_reason, total_ms",
                  clauses, params, page, page_size)
    for row in page_.items:
        ids = loads(row.pop("result_ids"), [])
        row["results"] = len(ids)
    return page_


def write_log(service, flt: LogFilter, page: int = 1, page_size: int = 50) -> Page:
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (("agent_id", flt.agent_id), ("user_id", flt.user_id), ("outcome", flt.outcome),
                          ("record_id", flt.record_id), ("actor", flt.actor)):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    if flt.kind:
        clauses.append("operation LIKE ? ESCAPE '\\'")
        params.append(_like(flt.kind))
    _time_clauses(flt, clauses, params)
    return _page(service, "write_log", "seq, at, operation, agent_id, user_id, actor, outcome, record_id, status, source_kind, total_ms",
                 clauses, params, page, page_size)


def event_log(service, flt: LogFilter, page: int = 1, page_size: int = 50) -> Page:
    clauses: list[str] = []
    params: list[Any] = []
    if flt.kind:
        clauses.append("kind = ?")
        params.append(flt.kind)
    if flt.actor:
        clauses.append("actor = ?")
        params.append(flt.actor)
    if flt.record_id:
        clauses.append("(record_id = ? OR entity_id = ?)")
        params += [flt.record_id, flt.record_id]
    if flt.text and flt.text.strip():
        clauses.append("reason LIKE ? ESCAPE '\\'")
        params.append(_like(flt.text.strip()))
    _time_clauses(flt, clauses, params)
    return _page(service, "events", "seq, at, kind, actor, record_id, entity_id, reason", clauses, params, page, page_size)


_JSON_COLUMNS = {
    "search_log": ("request", "scopes", "trace", "result_ids", "stages"),
    "write_log": ("candidate", "validation", "stages"),
    "events": ("payload",),
}


def log_entry(service, table: str, seq: int) -> dict | None:
    """One full log row with its JSON columns decoded."""
    if table not in _JSON_COLUMNS:
        raise ValueError(f"unknown log {table}")
    row = service.store.query_one(f"SELECT * FROM {table} WHERE seq = ?", (int(seq),))
    if row is None:
        return None
    if table == "search_log":  # compressed trace, settings stored once: the log's own decoder expands them
        from memory_core.retrieve.search_log import decode_row

        return decode_row(service.store, row)
    out = dict(row)
    for column in _JSON_COLUMNS[table]:
        out[column] = loads(out.get(column), {})
    return out


def search_log_entry(service, search_id: str) -> dict | None:
    """A search log row by its id (``srch_…``) or seq."""
    row = service.store.query_one("SELECT seq FROM search_log WHERE id = ? OR CAST(seq AS TEXT) = ?", (search_id, search_id))
    return log_entry(service, "search_log", row["seq"]) if row else None
