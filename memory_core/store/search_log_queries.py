"""Named queries over the search log (``search_log``) and the retrieval settings it names
(``search_settings``, one row per distinct configuration, keyed by a hash of its JSON).

The log stage (``retrieve/search_log.py``) decides what a row holds; these write and read it.
"""

from __future__ import annotations

from typing import Any

from .db import Store
from .paging import Where, select_page

SEARCH_LOG_COLUMNS = ("id", "at", "agent_id", "user_id", "session_id", "raw_query", "rewritten_query", "rewrite_status",
                      "request", "scopes", "trace", "result_ids", "empty_reason", "stages", "total_ms", "origin")
_INSERT = (f"INSERT INTO search_log ({', '.join(SEARCH_LOG_COLUMNS)}) VALUES ({','.join('?' * len(SEARCH_LOG_COLUMNS))})")
_INSERT_IF_ABSENT = _INSERT.replace("INSERT INTO", "INSERT OR IGNORE INTO", 1)


def insert_search(conn, row: dict[str, Any], *, if_absent: bool = False) -> None:
    """Write one search_log row (``row`` has every :data:`SEARCH_LOG_COLUMNS` key), inside the
    caller's transaction; with ``if_absent`` a row already there for the id is kept."""
    conn.execute(_INSERT_IF_ABSENT if if_absent else _INSERT, [row[c] for c in SEARCH_LOG_COLUMNS])


def remember_settings(conn, key: str, text: str, at: str) -> None:
    """Store a retrieval configuration under its hash (kept if already there), inside the caller's
    transaction. Always offered to the table (microseconds when present): a restore may have replaced it."""
    conn.execute("INSERT OR IGNORE INTO search_settings (id, settings, first_used_at) VALUES (?,?,?)", (key, text, at))


def settings_text(store: Store, key: str) -> str | None:
    """The stored JSON of the retrieval configuration ``key`` names, or None."""
    return store.scalar("SELECT settings FROM search_settings WHERE id = ?", (key,))


def search_row(store: Store, search_id: str):
    """The search_log row of ``search_id``, or None."""
    return store.query_one("SELECT * FROM search_log WHERE id = ?", (search_id,))


def recent_searches(store: Store, *, agent_id: str | None = None, user_id: str | None = None, limit: int = 50) -> list:
    """Recent logged searches, newest first: id, time, principal, query, result ids, empty reason, ms."""
    where = Where().equal("agent_id", agent_id).equal("user_id", user_id)
    return select_page(store, "id, at, agent_id, user_id, session_id, raw_query, rewritten_query, result_ids, empty_reason, total_ms",
                       "search_log", where, "seq DESC", limit)
