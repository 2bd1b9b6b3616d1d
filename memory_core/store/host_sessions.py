"""The SQL of host sessions reported by hooks (migration 100): which memory session a host's
conversation became, and how much of the host's transcript is already in it.

Every lookup names the principal as well as the host's session id, so a lookup made for one user
can never return another user's session. Rules (payload checks, transcript parsing) live in
``memory_core.mcp.hooks``.
"""

from __future__ import annotations

from typing import Any

from .db import Store


def latest_host_session(store: Store, *, host: str, agent_id: str, user_id: str,
                        host_session_id: str) -> dict[str, Any] | None:
    """This principal's current memory session for that host session id, or None: the open one if
    there is one, else the one that read furthest into the transcript (times alone can tie)."""
    row = store.query_one(
        "SELECT * FROM host_sessions WHERE host = ? AND agent_id = ? AND user_id = ? AND host_session_id = ? "
        "ORDER BY CASE WHEN ended_at IS NULL THEN 0 ELSE 1 END, transcript_lines DESC, started_at DESC LIMIT 1",
        (host, agent_id, user_id, host_session_id))
    return dict(row) if row is not None else None


def insert_host_session(store: Store, row: dict[str, Any]) -> None:
    """Record that a host session continues in memory session ``row['session_id']`` (from line
    ``row['transcript_lines']`` of its transcript)."""
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO host_sessions (host, host_session_id, agent_id, user_id, session_id, transcript_lines, started_at, "
            "last_event, last_event_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (row["host"], row["host_session_id"], row["agent_id"], row["user_id"], row["session_id"],
             row.get("transcript_lines", 0), row["at"], row["event"], row["at"]))


def note_event(store: Store, *, session_id: str, event: str, at: str, transcript_lines: int | None = None,
               ended: bool = False) -> None:
    """Record the latest hook event of a host session (and, when given, the transcript lines read).

    Call it inside the transaction that appended the turns read, so the count and the turns agree.
    """
    sets, params = ["last_event = ?", "last_event_at = ?"], [event, at]
    if transcript_lines is not None:
        sets.append("transcript_lines = ?")
        params.append(transcript_lines)
    if ended:
        sets.append("ended_at = ?")
        params.append(at)
    with store.transaction() as conn:
        conn.execute(f"UPDATE host_sessions SET {', '.join(sets)} WHERE session_id = ?", (*params, session_id))
