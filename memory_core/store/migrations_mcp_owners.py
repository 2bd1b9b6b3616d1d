"""Migration 106: who serves each MCP session, so a server that died cannot leave it open forever.

Registered in :mod:`.migrations`. Like the other migration modules, this one imports nothing from
the rest of the store package and never changes once released; its PostgreSQL counterpart is
``store/pg/schema.py`` migration 7.

``mcp_session_owners``: one row per MCP memory session, naming the server process that opened it.
``host_name`` with ``pid_namespace`` says where its pid means something (two containers may share
a host name, not a pid namespace); ``process_start`` is the boot id and the process's start time in
clock ticks since boot (``/proc/<pid>/stat`` field 22), so a pid reused by another process, or a
pid from before a reboot, is not taken for the owner. ``last_activity_at`` is the last sign of life
of an HTTP session (written at most a few times per idle period, not on every request).

``sessions.end_reason``: why a session ended, in words (``owner process gone``, ``idle``...); NULL
when the code that ended it gave none. ``sessions_open`` indexes the open sessions, which is what
the start-up and periodic sweeps read.
"""

from __future__ import annotations

import sqlite3

STATEMENTS = (
    "ALTER TABLE sessions ADD COLUMN end_reason TEXT",
    "CREATE INDEX sessions_open ON sessions(started_at) WHERE ended_at IS NULL",
    """
    CREATE TABLE mcp_session_owners (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        transport TEXT NOT NULL CHECK (transport IN ('stdio', 'http')),
        host_name TEXT NOT NULL,
        pid_namespace TEXT,
        pid INTEGER NOT NULL,
        process_start TEXT,
        started_at TEXT NOT NULL,
        last_activity_at TEXT NOT NULL
    )
    """,
)


def session_owners(conn: sqlite3.Connection) -> None:
    """Migration 106: ``mcp_session_owners``, ``sessions.end_reason`` and the open-sessions index."""
    for statement in STATEMENTS:
        conn.execute(statement)
