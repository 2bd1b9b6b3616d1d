"""Named queries of the grant table (``policy/grants.py`` decides; these read and write the rows)."""

from __future__ import annotations

import sqlite3


def agent_grants(conn, agent_id: str) -> list[sqlite3.Row]:
    """``scope_kind, scope_id, can_read, can_write`` of every grant an agent holds."""
    return conn.execute(*agent_grants_statement(agent_id)).fetchall()


def agent_grants_statement(agent_id: str) -> tuple[str, tuple]:
    """:func:`agent_grants` as a statement, to read together with others (``store.batching``)."""
    return "SELECT scope_kind, scope_id, can_read, can_write FROM grants WHERE agent_id = ?", (agent_id,)


def grant_flags(conn, agent_id: str, scope_kind: str, scope_id: str) -> sqlite3.Row | None:
    """``can_read, can_write`` of one grant, or None when there is none."""
    return conn.execute("SELECT can_read, can_write FROM grants WHERE agent_id = ? AND scope_kind = ? AND scope_id = ?",
                        (agent_id, scope_kind, scope_id)).fetchone()


def upsert_grant(conn, agent_id: str, scope_kind: str, scope_id: str, read: bool, write: bool, now: str, actor: str) -> None:
    """Create a grant, or change the flags of the one that exists (its creation stays as it was)."""
    conn.execute(
        "INSERT INTO grants (agent_id, scope_kind, scope_id, can_read, can_write, created_at, created_by) VALUES (?,?,?,?,?,?,?) "
        "ON CONFLICT(agent_id, scope_kind, scope_id) DO UPDATE SET can_read = excluded.can_read, can_write = excluded.can_write",
        (agent_id, scope_kind, scope_id, int(read), int(write), now, actor),
    )


def remove_grant(conn, agent_id: str, scope_kind: str, scope_id: str) -> bool:
    """Delete one grant; whether there was one."""
    cur = conn.execute("DELETE FROM grants WHERE agent_id = ? AND scope_kind = ? AND scope_id = ?", (agent_id, scope_kind, scope_id))
    return cur.rowcount > 0


def grant_rows(conn, agent_id: str | None = None) -> list[sqlite3.Row]:
    """Every grant (or one agent's) as ``agent_id, scope, can_read, can_write, created_at, created_by``,
    ordered by agent and scope."""
    sql = "SELECT agent_id, scope_kind || ':' || scope_id AS scope, can_read, can_write, created_at, created_by FROM grants"
    return conn.execute(sql + (" WHERE agent_id = ?" if agent_id else "") + " ORDER BY agent_id, scope",
                        (agent_id,) if agent_id else ()).fetchall()
