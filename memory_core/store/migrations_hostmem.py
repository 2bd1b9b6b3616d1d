"""Migrations 95-99: host-issued conditional memory (issue 15). Registered in :mod:`.migrations`.

Like the hardening migrations, this module imports nothing from the rest of the store package.
"""

from __future__ import annotations

import sqlite3


def host_memory_tables(conn: sqlite3.Connection) -> None:
    """Migration 95: one decision row per user turn served with host-issued memory, and the
    recorded fitness results that a host must have before it may turn that memory on.

    ``host_memory_decisions`` is read by the admin app's context view: ``gaps`` is a JSON list of
    strings, ``search_ids`` the search-log ids of the gap searches, ``candidates`` a JSON list of
    {record_id, version, score, admitted, reason}, ``admitted_ids`` the admitted record ids,
    ``decider`` 'offline-rules' or 'anthropic:<model>', ``message`` the exact tool-result text
    appended for the model (NULL when nothing was admitted).
    """
    for statement in (
        """
        CREATE TABLE host_memory_decisions (
          id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id), turn INTEGER NOT NULL,
          at TEXT NOT NULL, gaps TEXT NOT NULL DEFAULT '[]', search_ids TEXT NOT NULL DEFAULT '[]',
          candidates TEXT NOT NULL DEFAULT '[]', admitted_ids TEXT NOT NULL DEFAULT '[]',
          decider TEXT NOT NULL, reason TEXT NOT NULL, message TEXT)
        """,
        "CREATE INDEX host_memory_decisions_session ON host_memory_decisions(session_id, turn)",
        """
        CREATE TABLE fitness_results (
          id TEXT PRIMARY KEY,
          at TEXT NOT NULL,
          bundle_version TEXT NOT NULL,
          fingerprint TEXT NOT NULL,
          embed_model TEXT NOT NULL,
          embed_version TEXT NOT NULL,
          decider TEXT NOT NULL,
          settings TEXT NOT NULL DEFAULT '{}',
          passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
          metrics TEXT NOT NULL DEFAULT '{}',
          cases TEXT NOT NULL DEFAULT '[]',
          actor TEXT NOT NULL
        )
        """,
        "CREATE INDEX fitness_results_fingerprint ON fitness_results(fingerprint, passed)",
    ):
        conn.execute(statement)
