"""The logs and the history people read in the admin app: the three logs, sessions, searches, and
the overview's series.

Read-only, no policy applied, reached through the service's admin methods like
:mod:`memory_core.store.admin_reads` (whose :class:`RowsPage` the paged lists return). JSON columns
come back decoded; a search log row's compressed trace is expanded by the search log's own reader,
which the service calls.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .admin_reads import RowsPage, rows_page
from .db import Store, loads
from .paging import Where, like_pattern
from .urls import looks_like_url, sqlite_uri


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

    def _times(self, where: Where) -> Where:
        if self.since:
            where.add("at >= ?", self.since)
        if self.until:
            where.add("at < ?", self.until)
        return where

    def search_where(self) -> Where:
        """Conditions on ``search_log``: principal, query text or id, empty answers, time."""
        where = Where().equal("agent_id", self.agent_id).equal("user_id", self.user_id)
        if self.text and self.text.strip():
            where.add("(raw_query LIKE ? ESCAPE '\\' OR id = ?)", like_pattern(self.text.strip()), self.text.strip())
        if self.empty_only:
            where.add("result_ids = '[]'")
        return self._times(where)

    def write_where(self) -> Where:
        """Conditions on ``write_log``: principal, outcome, record, actor, operation (``kind``), time."""
        where = Where()
        for column, value in (("agent_id", self.agent_id), ("user_id", self.user_id), ("outcome", self.outcome),
                              ("record_id", self.record_id), ("actor", self.actor)):
            where.equal(column, value)
        if self.kind:
            where.add("operation LIKE ? ESCAPE '\\'", like_pattern(self.kind))
        return self._times(where)

    def event_where(self) -> Where:
        """Conditions on ``events``: kind, actor, record or entity, free text, time.

        The free text matches anywhere a person would look for it: the event's kind ("merge"
        finds ``entity.merged``), actor, record and entity ids, and reason.
        """
        where = Where().equal("kind", self.kind).equal("actor", self.actor)
        if self.record_id:
            where.add("(record_id = ? OR entity_id = ?)", self.record_id, self.record_id)
        if self.text and self.text.strip():
            pattern = like_pattern(self.text.strip())
            where.add("(" + " OR ".join(f"COALESCE({column}, '') LIKE ? ESCAPE '\\'" for column in EVENT_TEXT_COLUMNS)
                      + ")", *([pattern] * len(EVENT_TEXT_COLUMNS)))
        return self._times(where)


# The event columns the event log's free-text filter reads.
EVENT_TEXT_COLUMNS = ("kind", "actor", "record_id", "entity_id", "reason")


def search_log_page(store: Store, flt: LogFilter, page: int = 1, page_size: int = 50) -> RowsPage:
    """One page of the search log, newest first; ``results`` counts each search's returned records."""
    found = rows_page(store, "seq, id, at, origin, agent_id, user_id, raw_query, result_ids, empty_reason, total_ms", "search_log",
                      flt.search_where(), "seq DESC", page, page_size)
    for row in found.rows:
        row["results"] = len(loads(row.pop("result_ids"), []))
    return found


def write_log_page(store: Store, flt: LogFilter, page: int = 1, page_size: int = 50) -> RowsPage:
    """One page of the write log, newest first."""
    return rows_page(store, "seq, at, operation, agent_id, user_id, actor, outcome, record_id, status, source_kind, total_ms",
                     "write_log", flt.write_where(), "seq DESC", page, page_size)


def event_log_page(store: Store, flt: LogFilter, page: int = 1, page_size: int = 50) -> RowsPage:
    """One page of the event log, newest first."""
    return rows_page(store, "seq, at, kind, actor, record_id, entity_id, reason", "events", flt.event_where(), "seq DESC",
                     page, page_size)


def record_merge_events(store: Store, record_id: str) -> list[dict]:
    """The ``entity.merged`` events that relinked or re-subjected ``record_id``, oldest first, payloads
    decoded (a merge's event is the entity's, and names its records in the payload)."""
    rows = store.query("SELECT * FROM events WHERE kind = 'entity.merged' AND payload LIKE ? ESCAPE '\\' ORDER BY seq",
                       (like_pattern(f'"{record_id}"'),))
    found = [{**dict(r), "payload": loads(r["payload"], {})} for r in rows]
    return [e for e in found if record_id in (e["payload"].get("records") or [])]


# Each log's JSON columns (the table names are fixed here: nothing else is read by seq).
LOG_JSON_COLUMNS = {
    "search_log": ("request", "scopes", "trace", "result_ids", "stages"),
    "write_log": ("candidate", "validation", "stages"),
    "events": ("payload",),
}


def log_row(store: Store, table: str, seq: int) -> Any:
    """One row of a log by its ``seq``, as stored (None if there is none): the caller decodes it
    (:func:`decode_log_row`, or the search log's own reader for ``search_log``)."""
    if table not in LOG_JSON_COLUMNS:
        raise ValueError(f"unknown log {table}")
    return store.query_one(f"SELECT * FROM {table} WHERE seq = ?", (int(seq),))


def decode_log_row(table: str, row: Any) -> dict:
    """A write log or event row with its JSON columns decoded."""
    out = dict(row)
    for column in LOG_JSON_COLUMNS[table]:
        out[column] = loads(out.get(column), {})
    return out


# -- searches and sessions ------------------------------------------------------------------------


def recent_searches(store: Store, limit: int = 50) -> list[dict[str, Any]]:
    """The latest logged searches with how many records each returned."""
    rows = store.query(
        "SELECT id, at, origin, agent_id, user_id, raw_query, result_ids FROM search_log ORDER BY seq DESC LIMIT ?", (limit,))
    return [{**dict(r), "results": len(loads(r["result_ids"], []))} for r in rows]


def session_searches(store: Store, session_id: str) -> list[dict[str, Any]]:
    """Every logged search of one session, in time order, with its result ids decoded."""
    rows = store.query(
        "SELECT seq, id, at, origin, raw_query, result_ids, empty_reason FROM search_log WHERE session_id = ? "
        "ORDER BY at, seq", (session_id,))
    return [{**dict(r), "result_ids": loads(r["result_ids"], []) or []} for r in rows]


HOST_DECISIONS_TABLE = "host_memory_decisions"


def table_exists(store: Store, name: str) -> bool:
    """Whether the store has a table called ``name`` (on either backend)."""
    if store.backend == "postgresql":
        return bool(store.scalar("SELECT to_regclass(?) IS NOT NULL", (name,)))
    return store.scalar("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)) is not None


def host_decisions(store: Store, session_id: str) -> list[dict[str, Any]] | None:
    """The host-issued memory decisions of one session in turn order (JSON decoded), or None when
    this store has no such table (its migration is not part of every store's history)."""
    if not table_exists(store, HOST_DECISIONS_TABLE):
        return None
    rows = store.query(f"SELECT * FROM {HOST_DECISIONS_TABLE} WHERE session_id = ? ORDER BY turn, at, id", (session_id,))
    out = []
    for row in rows:
        item = dict(row)
        for column in ("gaps", "search_ids", "candidates", "admitted_ids"):
            item[column] = loads(item.get(column), []) or []
        out.append(item)
    return out


def recent_sessions(store: Store, limit: int = 300) -> list[dict[str, Any]]:
    """The latest sessions with who, when, the adapter, and whether a prompt prefix was recorded."""
    rows = store.query(
        "SELECT s.id, s.agent_id, s.user_id, s.started_at, s.ended_at, s.framework, s.trigger_mode, "
        "c.ambient_enabled, c.session_id IS NOT NULL AS recorded FROM sessions s "
        "LEFT JOIN session_context c ON c.session_id = s.id ORDER BY s.started_at DESC, s.id LIMIT ?", (limit,))
    return [dict(r) for r in rows]


def ended_sessions(store: Store, agent_id: str | None = None, user_id: str | None = None, page: int = 1,
                   page_size: int = 50) -> RowsPage:
    """Ended sessions, newest first, each with its turn count and its latest extraction run."""
    where = Where().add("s.ended_at IS NOT NULL").equal("s.agent_id", agent_id).equal("s.user_id", user_id)
    columns = ("s.id AS session_id, s.agent_id, s.user_id, s.project_id, s.framework, s.trigger_mode, s.started_at, s.ended_at, "
               "(SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) AS turns, "
               "(SELECT r.id FROM extraction_runs r WHERE r.session_id = s.id ORDER BY r.created_at DESC, r.rowid DESC LIMIT 1) AS latest_run, "
               "(SELECT r.status FROM extraction_runs r WHERE r.session_id = s.id ORDER BY r.created_at DESC, r.rowid DESC LIMIT 1) AS run_status")
    return rows_page(store, columns, "sessions s", where, "s.ended_at DESC, s.rowid DESC", page, page_size)


# -- the overview's series ------------------------------------------------------------------------


def live_records_per_day(store: Store) -> list[dict[str, Any]]:
    """Records created per day and type, tombstones left out (day order)."""
    rows = store.query(
        "SELECT substr(created_at, 1, 10) AS day, type, COUNT(*) AS n FROM records WHERE status != 'deleted' "
        "GROUP BY day, type ORDER BY day")
    return [dict(r) for r in rows]


# The searches agents and people made: the extractor's related-record look-ups left out.
NOT_EXTRACTION = "(origin IS NULL OR origin <> 'extraction')"


def search_timings(store: Store, include_extraction: bool = False) -> list[dict[str, Any]]:
    """Every logged search's day, total milliseconds and whether it returned nothing, in log order
    (the extractor's own searches only with ``include_extraction``)."""
    where = "" if include_extraction else f" WHERE {NOT_EXTRACTION}"
    rows = store.query(f"SELECT substr(at, 1, 10) AS day, total_ms, result_ids FROM search_log{where} ORDER BY seq")
    return [{"day": r["day"], "total_ms": float(r["total_ms"] or 0.0), "empty": not loads(r["result_ids"], [])} for r in rows]


def search_outcomes(store: Store, include_extraction: bool = False) -> list[dict[str, Any]]:
    """Every logged search's emptiness and empty reason (the extractor's own searches only with
    ``include_extraction``)."""
    where = "" if include_extraction else f" WHERE {NOT_EXTRACTION}"
    rows = store.query(f"SELECT result_ids, empty_reason FROM search_log{where}")
    return [{"empty": not loads(r["result_ids"], []), "empty_reason": r["empty_reason"]} for r in rows]


def review_backlog(store: Store) -> list[dict[str, Any]]:
    """Per scope: provisional records and review-due flags waiting for a person, largest first."""
    rows = store.query(
        # a subquery, so the outer clauses may name the counts (PostgreSQL allows no alias in HAVING)
        "SELECT scope, provisional, review_due FROM (SELECT scope_kind || ':' || scope_id AS scope, "
        "SUM(status = 'provisional') AS provisional, SUM(review_flagged_at IS NOT NULL) AS review_due "
        "FROM records WHERE status != 'deleted' GROUP BY scope_kind, scope_id) q "
        "WHERE provisional > 0 OR review_due > 0 ORDER BY provisional + review_due DESC, scope")
    return [dict(r) for r in rows]


def extraction_outcomes(store: Store) -> dict[str, list[dict[str, Any]]]:
    """Runs by status, and the candidates of each run's latest attempt by what became of them."""
    runs = store.query("SELECT status, COUNT(*) AS n FROM extraction_runs GROUP BY status ORDER BY status")
    candidates = store.query(
        "SELECT COALESCE(c.outcome, c.verdict, 'pending') AS outcome, COUNT(*) AS n FROM extraction_candidates c "
        "JOIN extraction_runs r ON r.id = c.run_id AND c.attempt = r.attempts GROUP BY 1 ORDER BY 2 DESC")
    return {"runs": [dict(r) for r in runs], "candidates": [dict(r) for r in candidates]}


def stored_demo_now(path: str | Path) -> str | None:
    """The ``demo_now`` a demo store file carries in its metadata, read without opening it as a store
    (None for a URL, a missing or unreadable file, or a store that is not a demo)."""
    if looks_like_url(str(path)) or not Path(path).is_file():
        return None
    try:
        conn = sqlite3.connect(sqlite_uri(Path(path).resolve(), mode="ro"), uri=True)
        try:
            row = conn.execute("SELECT value FROM store_meta WHERE key = 'demo_now'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return row[0] if row else None
