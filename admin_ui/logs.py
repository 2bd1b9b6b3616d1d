"""The search log, write log and event log: filtered pages and single entries."""

from __future__ import annotations

from dataclasses import dataclass

from memory_core.store.db import loads
from memory_core.store.paging import Where, like_pattern

from .pagination import Page, query_page


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


def _time_clauses(flt: LogFilter, where: Where, column: str = "at") -> Where:
    if flt.since:
        where.add(f"{column} >= ?", flt.since)
    if flt.until:
        where.add(f"{column} < ?", flt.until)
    return where


def _page(service, table: str, columns: str, where: Where, page: int, page_size: int) -> Page:
    return query_page(service.store, columns, table, where, "seq DESC", page, page_size)


def search_log(service, flt: LogFilter, page: int = 1, page_size: int = 50) -> Page:
    where = Where()
    if flt.agent_id:
        where.add("agent_id = ?", flt.agent_id)
    if flt.user_id:
        where.add("user_id = ?", flt.user_id)
    if flt.text and flt.text.strip():
        where.add("(raw_query LIKE ? ESCAPE '\\' OR id = ?)", like_pattern(flt.text.strip()), flt.text.strip())
    if flt.empty_only:
        where.add("result_ids = '[]'")
    _time_clauses(flt, where)
    page_ = _page(service, "search_log", "seq, id, at, agent_id, user_id, raw_query, result_ids, empty_reason, total_ms",
                  where, page, page_size)
    for row in page_.items:
        ids = loads(row.pop("result_ids"), [])
        row["results"] = len(ids)
    return page_


def write_log(service, flt: LogFilter, page: int = 1, page_size: int = 50) -> Page:
    where = Where()
    for column, value in (("agent_id", flt.agent_id), ("user_id", flt.user_id), ("outcome", flt.outcome),
                          ("record_id", flt.record_id), ("actor", flt.actor)):
        if value:
            where.add(f"{column} = ?", value)
    if flt.kind:
        where.add("operation LIKE ? ESCAPE '\\'", like_pattern(flt.kind))
    _time_clauses(flt, where)
    return _page(service, "write_log", "seq, at, operation, agent_id, user_id, actor, outcome, record_id, status, source_kind, total_ms",
                 where, page, page_size)


def event_log(service, flt: LogFilter, page: int = 1, page_size: int = 50) -> Page:
    where = Where()
    if flt.kind:
        where.add("kind = ?", flt.kind)
    if flt.actor:
        where.add("actor = ?", flt.actor)
    if flt.record_id:
        where.add("(record_id = ? OR entity_id = ?)", flt.record_id, flt.record_id)
    if flt.text and flt.text.strip():
        where.add("reason LIKE ? ESCAPE '\\'", like_pattern(flt.text.strip()))
    _time_clauses(flt, where)
    return _page(service, "events", "seq, at, kind, actor, record_id, entity_id, reason", where, page, page_size)


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

