"""Both backends' migrations make the same tables with the same columns."""

import sqlite3

from memory_core.store.backend import open_store
from tests import pg_server

# Columns only the PostgreSQL schema has, on purpose (memory_core/store/pg/schema.py says why).
PG_ONLY = {("records", "embedding_vec"), ("record_entities", "rowid"), ("sessions", "rowid"), ("extraction_runs", "rowid"),
           ("host_memory_decisions", "rowid"), ("fitness_results", "rowid")}
# record_counts: rows per scope, status and type, kept by triggers, so the hard filter's count is one lookup
PG_ONLY |= {("record_counts", c) for c in ("scope_kind", "scope_id", "status", "type", "n")}


def test_sqlite_and_postgresql_schemas_have_the_same_tables_and_columns(tmp_path):
    lite = open_store(tmp_path / "s.sqlite", "2026-01-01T00:00:00Z")
    tables = [r[0] for r in lite.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'records_fts%' "
                                       "AND name NOT LIKE 'sqlite_%'")]
    sqlite_columns = {(t, r[1]) for t in tables for r in lite.query(f"PRAGMA table_info({t})")}
    lite.close()
    url = pg_server.create_database()
    try:
        pg = open_store(url, "2026-01-01T00:00:00Z")
        pg_columns = {(r[0], r[1]) for r in pg.query(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name != 'records_fts'")}
        pg.close()
    finally:
        pg_server.drop_database(url)
    assert pg_columns - PG_ONLY == sqlite_columns
