"""Sessions and their transcript turns: the SQL behind ``MemoryService.start_session`` and ``Session``."""

from __future__ import annotations

import sqlite3

from ..errors import NotFoundError, SessionClosedError, SessionOwnerError
from .db import Store, dumps, loads


def session_lock(session_id: str) -> str:
    """The lock name of one session's rows (not a scope key: those never hold "~")."""
    return f"~session:{session_id}"


def open_session(store: Store, *, session_id: str, agent_id: str, user_id: str, project_id: str | None,
                 write_targets: dict[str, str], now: str, framework: str | None = None, trigger_mode: str | None = None) -> None:
    """Create the session row (with a ``session.started`` event), or check that an existing one may be resumed."""
    with store.transaction((session_lock(session_id),)) as conn:
        existing = conn.execute("SELECT agent_id, user_id, ended_at FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if existing:
            if (existing["agent_id"], existing["user_id"]) != (agent_id, user_id):
                raise SessionOwnerError(f"session {session_id} belongs to another principal, not agent {agent_id} and user {user_id}",
                                        session_id=session_id)
            if existing["ended_at"]:
                raise SessionClosedError(f"session {session_id} has ended")
            return
        conn.execute(
            "INSERT INTO sessions (id, agent_id, user_id, project_id, write_targets, started_at, framework, trigger_mode) "
            "VALUES (?,?,?,?,?,?,?,?)",
            (session_id, agent_id, user_id, project_id, dumps(write_targets), now, framework, trigger_mode),
        )
        store.append_event(conn, at=now, kind="session.started", actor=f"agent:{agent_id}",
                           payload={"session_id": session_id, "user_id": user_id, "project_id": project_id,
                                    "framework": framework, "trigger_mode": trigger_mode})


def session_row(store: Store, session_id: str) -> dict:
    """The stored session (write targets decoded); NotFoundError when there is none."""
    row = store.query_one("SELECT * FROM sessions WHERE id = ?", (session_id,))
    if row is None:
        raise NotFoundError(f"no session {session_id}")
    return {**dict(row), "write_targets": loads(row["write_targets"], {})}


def append_turn(store: Store, session_id: str, role: str, content: str, at: str) -> int:
    """Add the next transcript turn; returns its number (0-based)."""
    with store.transaction((session_lock(session_id),)) as conn:  # numbers the session's turns, nothing else
        turn = conn.execute("SELECT COALESCE(MAX(turn) + 1, 0) FROM turns WHERE session_id = ?", (session_id,)).fetchone()[0]
        conn.execute("INSERT INTO turns (session_id, turn, role, content, at) VALUES (?,?,?,?,?)", (session_id, turn, role, content, at))
    return int(turn)


def mark_ended(store: Store, conn: sqlite3.Connection, session_id: str, agent_id: str, now: str) -> None:
    """Set ``ended_at`` with a ``session.ended`` event (inside the caller's transaction)."""
    conn.execute("UPDATE sessions SET ended_at = ? WHERE id = ?", (now, session_id))
    store.append_event(conn, at=now, kind="session.ended", actor=f"agent:{agent_id}", payload={"session_id": session_id})


def transcript(store: Store, session_id: str) -> list[dict]:
    """Every turn of the session, in order."""
    return [dict(r) for r in store.query("SELECT turn, role, content, at FROM turns WHERE session_id = ? ORDER BY turn", (session_id,))]


def recent_turns(store: Store, session_id: str, turns: int) -> list[dict]:
    """The latest ``turns`` turns, oldest first."""
    rows = store.query("SELECT role, content FROM turns WHERE session_id = ? ORDER BY turn DESC LIMIT ?", (session_id, turns))
    return [dict(r) for r in reversed(rows)]
