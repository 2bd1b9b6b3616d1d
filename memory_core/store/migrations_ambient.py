"""Migrations 90-94: the ambient profile and what a model saw. Registered in :mod:`.migrations`.

Like the hardening migrations, these import nothing from the rest of the store package (the
runner is imported by ``db``) and never change once released.
"""

from __future__ import annotations

import sqlite3


def search_origin(conn: sqlite3.Connection) -> None:
    """Migration 90: who made each search. ``model`` (its own memory_search call), ``host`` (the
    adapter's search in auto/hybrid), ``admin`` (the search explorer, a replay), ``eval`` (an
    evaluation harness); NULL for rows written before this column and for direct API calls."""
    conn.execute(
        "ALTER TABLE search_log ADD COLUMN origin TEXT "
        "CHECK (origin IS NULL OR origin IN ('model','host','admin','eval'))"
    )
    conn.execute("CREATE INDEX search_log_session ON search_log(session_id, at) WHERE session_id IS NOT NULL")


def ambient_decisions(conn: sqlite3.Connection) -> None:
    """Migration 91: people's decisions about a record lineage's place in the ambient profile.

    Rows are only ever added: the latest row of a lineage is its standing decision. An
    approval or refusal names the version it was made on (a new version needs a new decision);
    a user's removal holds for the whole lineage until they restore it.
    """
    _script(conn, """
        CREATE TABLE ambient_decisions (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            lineage_id TEXT NOT NULL,
            record_id TEXT NOT NULL REFERENCES records(id),
            version INTEGER NOT NULL,
            decision TEXT NOT NULL CHECK (decision IN ('approved','refused','removed','restored')),
            actor TEXT NOT NULL,
            at TEXT NOT NULL,
            reason TEXT
        );
        CREATE INDEX ambient_decisions_lineage ON ambient_decisions(lineage_id, seq)
    """)


def session_context(conn: sqlite3.Connection) -> None:
    """Migration 92: the prompt prefix of a session as its model received it.

    Written once when an adapter opens the session (policy, ambient profile with each item's
    record id and version and exact text, memory tool definitions); ``system_text`` and
    ``offered_tools`` are filled on the session's first model call, when the adapter sees the
    whole system message and every tool (the host's own too). Never rewritten afterwards, except
    that forgetting a record erases its text here as everywhere else.
    """
    _script(conn, """
        CREATE TABLE session_context (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id),
            recorded_at TEXT NOT NULL,
            framework TEXT,
            trigger_mode TEXT,
            policy TEXT NOT NULL,
            ambient_enabled INTEGER NOT NULL DEFAULT 0,
            profile_text TEXT,
            profile_items TEXT NOT NULL DEFAULT '[]',
            profile_excluded TEXT NOT NULL DEFAULT '[]',
            profile_limits TEXT NOT NULL DEFAULT '{}',
            memory_tools TEXT NOT NULL DEFAULT '[]',
            system_text TEXT,
            offered_tools TEXT,
            model_view_at TEXT
        )
    """)


def _script(conn: sqlite3.Connection, sql: str) -> None:
    # executescript would commit the migration's transaction; run statement by statement instead.
    for statement in sql.split(";"):
        if statement.strip():
            conn.execute(statement)
