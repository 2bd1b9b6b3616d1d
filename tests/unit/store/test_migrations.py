import sqlite3

import pytest

from memory_core.errors import MigrationError
from memory_core.store.db import Store
from memory_core.store.migrations import MIGRATIONS, migrate

NOW = "2026-03-05T10:00:00.000000Z"


def columns(conn, table):
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def test_blank_file_migrates_to_full_schema(tmp_path):
    store = Store.open(tmp_path / "m.sqlite", NOW)
    conn = store.conn
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table')")}
    for table in ("records", "entities", "entity_aliases", "record_entities", "grants", "sessions", "turns",
                  "events", "write_log", "search_log", "index_changes", "store_meta", "records_fts",
                  "extraction_runs", "extraction_candidates", "schema_migrations"):
        assert table in tables
    record_columns = columns(conn, "records")
    envelope = ["id", "type", "version", "content", "subject_entity_id", "attribute", "subject", "scope_kind", "scope_id",
                "source_kind", "source_ref", "creator_agent_id", "evidence", "created_at", "event_at", "expires_at",
                "valid_from", "valid_until", "review_at", "review_flagged_at", "confidence", "status", "supersedes_id",
                "conflicts_with", "tags", "embedding", "embed_model", "embed_version"]
    for column in envelope:
        assert column in record_columns
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    applied = [r[0] for r in conn.execute("SELECT number FROM schema_migrations ORDER BY number")]
    assert applied == sorted(MIGRATIONS)
    store.close()


def test_reopening_applies_nothing_new(tmp_path):
    Store.open(tmp_path / "m.sqlite", NOW).close()
    conn = sqlite3.connect(tmp_path / "m.sqlite", isolation_level=None)
    assert migrate(conn, NOW) == []
    conn.close()


def test_store_newer_than_code_is_refused(tmp_path):
    Store.open(tmp_path / "m.sqlite", NOW).close()
    conn = sqlite3.connect(tmp_path / "m.sqlite", isolation_level=None)
    conn.execute("INSERT INTO schema_migrations VALUES (9999, 'from the future', ?)", (NOW,))
    with pytest.raises(MigrationError):
        migrate(conn, NOW)
    conn.close()


def test_event_log_is_append_only(tmp_path):
    store = Store.open(tmp_path / "m.sqlite", NOW)
    with store.transaction() as conn:
        store.append_event(conn, at=NOW, kind="test", actor="t")
    with pytest.raises(sqlite3.IntegrityError):
        with store.transaction() as conn:
            conn.execute("UPDATE events SET kind = 'changed'")
    with pytest.raises(sqlite3.IntegrityError):
        with store.transaction() as conn:
            conn.execute("DELETE FROM events")
    assert store.scalar("SELECT kind FROM events") == "test"
    store.close()


def test_schema_doc_is_current():
    from pathlib import Path

    from memory_core.docgen.schema_doc import render

    doc = Path(__file__).resolve().parents[3] / "docs" / "schema.md"
    assert doc.read_text() == render(), "regenerate: python -m memory_core.docgen.schema_doc > docs/schema.md"
