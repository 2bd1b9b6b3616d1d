"""Migration 100: API keys for the MCP server and the host sessions its hooks report (issue 25).

Registered in :mod:`.migrations`. Like the other migration modules, this one imports nothing from
the rest of the store package and never changes once released; its PostgreSQL counterpart is
``store/pg/schema.py`` migration 5 (the tables' text is in ``store/pg/schema_mcp.py``).
"""

from __future__ import annotations

import sqlite3

# ``api_keys``: one row per bearer token. Only the SHA-256 of the token is kept (``token_hash``);
# the token itself is shown once, when the key is created. ``kind`` separates the two uses: a
# model key opens MCP sessions (the five tools), a host key reports transcripts through the hook
# endpoint; neither is accepted where the other belongs. A key names a principal (agent, user,
# optional project); grants still decide what that principal may read and write.
#
# ``host_sessions``: one row per memory session a host's hooks opened, with the host's own session
# id (Claude Code's session_id). A host session resumed after it ended continues in a new memory
# session (a new row with the same host id). Lookups always name the principal too, so two users
# whose hosts send the same id never share a session. ``transcript_lines`` is how many lines of
# the host's transcript have become turns of this or an earlier memory session of that host session.
STATEMENTS = (
    """
    CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('model', 'host')),
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        project_id TEXT,
        label TEXT,
        token_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        created_by TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT,
        revoked_by TEXT,
        revoke_reason TEXT
    )
    """,
    "CREATE INDEX api_keys_principal ON api_keys(agent_id, user_id)",
    """
    CREATE TABLE host_sessions (
        host TEXT NOT NULL,
        host_session_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        transcript_lines INTEGER NOT NULL DEFAULT 0,
        started_at TEXT NOT NULL,
        last_event TEXT NOT NULL,
        last_event_at TEXT NOT NULL,
        ended_at TEXT
    )
    """,
    "CREATE INDEX host_sessions_host_id ON host_sessions(host, agent_id, user_id, host_session_id, started_at)",
)


def mcp_tables(conn: sqlite3.Connection) -> None:
    """Migration 100: ``api_keys`` and ``host_sessions``."""
    for statement in STATEMENTS:
        conn.execute(statement)
