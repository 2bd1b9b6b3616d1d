"""PostgreSQL migrations 5 and 7: SQLite's 100 (API keys, host sessions; see ``store/migrations_mcp.py``) and 106 (MCP session owners)."""

from __future__ import annotations

MCP_TABLES = """
CREATE TABLE api_keys (
    id text PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('model', 'host')),
    agent_id text NOT NULL,
    user_id text NOT NULL,
    project_id text,
    label text,
    token_hash text NOT NULL UNIQUE,
    created_at text NOT NULL,
    created_by text NOT NULL,
    last_used_at text,
    revoked_at text,
    revoked_by text,
    revoke_reason text
);
CREATE INDEX api_keys_principal ON api_keys(agent_id, user_id);

CREATE TABLE host_sessions (
    host text NOT NULL,
    host_session_id text NOT NULL,
    agent_id text NOT NULL,
    user_id text NOT NULL,
    session_id text PRIMARY KEY REFERENCES sessions(id),
    transcript_lines bigint NOT NULL DEFAULT 0,
    started_at text NOT NULL,
    last_event text NOT NULL,
    last_event_at text NOT NULL,
    ended_at text
);
CREATE INDEX host_sessions_host_id ON host_sessions(host, agent_id, user_id, host_session_id, started_at);
"""

# Migration 7: SQLite's 106 (who serves each MCP session, why a session ended; ``store/migrations_mcp_owners.py``).
MCP_OWNERS = """
ALTER TABLE sessions ADD COLUMN end_reason text;
CREATE INDEX sessions_open ON sessions(started_at) WHERE ended_at IS NULL;

CREATE TABLE mcp_session_owners (
    session_id text PRIMARY KEY REFERENCES sessions(id),
    transport text NOT NULL CHECK (transport IN ('stdio', 'http')),
    host_name text NOT NULL,
    pid_namespace text,
    pid bigint NOT NULL,
    process_start text,
    started_at text NOT NULL,
    last_activity_at text NOT NULL
);
"""
