"""The SQL of MCP session owners (migration 106): who serves each MCP session, its last sign of
life, and the one conditional statement that lets exactly one process end a session.

Rules (which owner is dead, when a session is idle) live in ``memory_core.mcp.owners``; this
module only reads and writes ``mcp_session_owners`` and ``sessions.end_reason``.
"""

from __future__ import annotations

from typing import Any

from .db import Store

OWNER_COLUMNS = "transport, host_name, pid_namespace, pid, process_start, started_at, last_activity_at"


def insert_owner(store: Store, row: dict[str, Any]) -> None:
    """Record the server process that serves MCP session ``row['session_id']``."""
    with store.transaction(()) as conn:
        conn.execute(
            f"INSERT INTO mcp_session_owners (session_id, {OWNER_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
            (row["session_id"], row["transport"], row["host_name"], row["pid_namespace"], row["pid"],
             row["process_start"], row["at"], row["at"]))


def owner_row(store: Store, session_id: str) -> dict[str, Any] | None:
    """The owner of one MCP session, with the session's end time and reason, or None."""
    row = store.query_one(
        f"SELECT o.session_id, {', '.join('o.' + c for c in OWNER_COLUMNS.split(', '))}, s.ended_at, s.end_reason "
        "FROM mcp_session_owners o JOIN sessions s ON s.id = o.session_id WHERE o.session_id = ?", (session_id,))
    return dict(row) if row is not None else None


def open_owned_sessions(store: Store) -> list[dict[str, Any]]:
    """Every open session that has an owner row, with its agent (the open-sessions index drives it)."""
    rows = store.query(
        f"SELECT o.session_id, s.agent_id, {', '.join('o.' + c for c in OWNER_COLUMNS.split(', '))} "
        "FROM sessions s JOIN mcp_session_owners o ON o.session_id = s.id WHERE s.ended_at IS NULL "
        "ORDER BY s.started_at, s.id")
    return [dict(r) for r in rows]


def touch_owner(store: Store, session_ids: list[str], at: str) -> int:
    """Set the last activity of those sessions that are still open to ``at`` (only forward); returns
    how many rows changed (fewer than asked: some ended meanwhile, or were touched later)."""
    if not session_ids:
        return 0
    marks = ",".join("?" for _ in session_ids)
    with store.transaction(()) as conn:
        cur = conn.execute(
            f"UPDATE mcp_session_owners SET last_activity_at = ? WHERE session_id IN ({marks}) AND last_activity_at < ? "
            f"AND session_id IN (SELECT id FROM sessions WHERE id IN ({marks}) AND ended_at IS NULL)",
            (at, *session_ids, at, *session_ids))
        return int(cur.rowcount)


def claim_end(conn, session_id: str, reason: str, *, idle_before: str | None = None) -> bool:
    """Inside a whole-store write transaction: mark an open session as being ended for ``reason``.

    True for the one caller that wins; False when the session has already ended (or, with
    ``idle_before``, when its owner was active at or after that time). The caller then ends it in
    the same transaction, so a concurrent claimer sees ``ended_at`` set and loses.
    """
    sql = "UPDATE sessions SET end_reason = ? WHERE id = ? AND ended_at IS NULL"
    params: tuple = (reason, session_id)
    if idle_before is not None:
        sql += " AND id IN (SELECT session_id FROM mcp_session_owners WHERE session_id = ? AND last_activity_at < ?)"
        params = (*params, session_id, idle_before)
    return conn.execute(sql, params).rowcount == 1
