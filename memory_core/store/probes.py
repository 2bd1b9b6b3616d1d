"""Looks at a store file, or at the schema a blank store gets, without opening a store.

``notebook/launcher.py`` asks whether a file is a demo store before it starts the app for it;
``docgen/schema_doc.py`` lists the schema of a freshly migrated database for docs/schema.md.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from .backend import is_postgres_url
from .migrations import migrate
from .urls import file_path, sqlite_uri


def is_demo_store(path: str | Path) -> bool:
    """Whether the store file at ``path`` was built by ``memory_core.demo`` (it records ``demo_now``).
    False for a PostgreSQL URL (a demo is built as a file) and for anything that is not such a file.
    Read through a read-only connection of its own: nothing is created or migrated."""
    if is_postgres_url(path):
        return False
    try:
        conn = sqlite3.connect(sqlite_uri(file_path(path).resolve(), mode="ro"), uri=True)
        try:
            return conn.execute("SELECT 1 FROM store_meta WHERE key = 'demo_now'").fetchone() is not None
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def fresh_schema() -> list[tuple[str, str, str]]:
    """(type, name, sql) of every schema object in a blank migrated store, in a stable order
    (tables, then indexes, then the rest; the full-text index's shadow tables left out)."""
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(str(Path(tmp) / "schema.sqlite"), isolation_level=None)
        migrate(conn, "1970-01-01T00:00:00.000000Z")
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE 'records_fts_%' ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, name"
        ).fetchall()
        conn.close()
    return rows
