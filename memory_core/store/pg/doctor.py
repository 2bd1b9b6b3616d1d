"""``agent-memory doctor`` on PostgreSQL: the backend's own checks, then the portable ones.

SQLite's file checks (``integrity_check``, FTS5's structure, WAL and free pages) have no meaning
here; in their place: the PostgreSQL migrations, one full-text row per non-deleted record, a
pgvector value beside every embedding, the IVF index state, the per-scope counts, the erasure pass (pending, and
whether the server removes old WAL segments), the copies of the WAL a forget's erasure pass cannot reach
(replication slots, archiving, standbys and WAL receivers, ``wal_keep_size``), and table sizes from the catalogue.
"""

from __future__ import annotations

from .erasure import retention_findings
from .schema import PG_MIGRATIONS

# What each retention check says when nothing keeps WAL beyond the erasure pass's reach.
RETENTION_OK = {
    "replication slots": "no replication slot holds WAL",
    "wal archiving": "WAL archiving is off",
    "standbys": "no standby or WAL receiver is streaming from this server",
    "wal_keep_size": "wal_keep_size is 0: checkpoints remove old WAL",
}


def pg_checks(store, report) -> None:
    """Add the PostgreSQL-specific checks to ``report`` (a :class:`memory_core.store.doctor.DoctorReport`)."""
    conn = store.conn
    applied = {r[0] for r in conn.execute("SELECT number FROM schema_migrations").fetchall()}
    unknown = sorted(applied - set(PG_MIGRATIONS))
    missing = sorted(set(PG_MIGRATIONS) - applied)
    if unknown:
        report.add("schema", "fail", f"postgres migrations {unknown} come from newer code")
    elif missing:
        report.add("schema", "warn", f"postgres migrations {missing} not applied yet (opening the store applies them)")
    else:
        report.add("schema", "ok", f"all {len(applied)} postgres migration(s) applied")
    live = {r[0] for r in conn.execute("SELECT seq FROM records WHERE status != 'deleted'").fetchall()}
    fts = {r[0] for r in conn.execute("SELECT rowid FROM records_fts").fetchall()}
    extra, lacking = fts - live, live - fts
    report.add("fts rows", "fail" if extra or lacking else "ok",
               f"{len(lacking)} record(s) missing from the full-text table, {len(extra)} row(s) for deleted or absent records"
               if extra or lacking else f"{len(fts)} rows, one per non-deleted record")
    unmatched = conn.execute("SELECT COUNT(*) FROM records WHERE status != 'deleted' AND embedding IS NOT NULL "
                             "AND (embedding_vec IS NULL OR vector_dims(embedding_vec) != embed_dim)").fetchone()[0]
    report.add("pgvector column", "fail" if unmatched else "ok",
               f"{unmatched} live record(s) whose pgvector value does not match the embedding" if unmatched
               else "every live embedding has its pgvector value")
    ivf = conn.execute("SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                       "WHERE c.relname = 'records_embedding_ivf'").fetchone()
    report.add("ivf index", "ok" if ivf is None or ivf[0] else "warn",
               "absent (exact search)" if ivf is None else "valid" if ivf[0] else "invalid (a failed build; it is rebuilt)")
    counted = conn.execute("SELECT COALESCE(sum(n), 0) FROM record_counts").fetchone()[0]
    rows = conn.execute("SELECT count(*) FROM records WHERE embedding_vec IS NOT NULL").fetchone()[0]
    report.add("record counts", "ok" if counted == rows else "fail",
               f"{rows} rows with a vector, counted per scope" if counted == rows else
               f"record_counts says {counted} rows with a vector, the table has {rows} (a load with triggers off? "
               "memory_core.store.pg.schema.recount_records fixes it)")
    pending = conn.execute("SELECT value FROM store_meta WHERE key = 'erase_pending_xid'").fetchone()
    if pending:
        report.add("erasure pass", "warn", "a forget's erasure pass has not completed yet (dead rows may still hold "
                   "forgotten text until it runs; any process's worker retries)")
    recycle = conn.execute("SELECT setting FROM pg_settings WHERE name = 'wal_recycle'").fetchone()
    if recycle and recycle[0] != "off":
        report.add("wal recycling", "warn", "wal_recycle is on: old WAL segments are renamed and reused, so forgotten "
                   "text stays in them until overwritten (set wal_recycle = off; docs/scaling.md)")
    # Copies of the WAL that a forget's erasure pass cannot erase (docs/scaling.md): each is a warning.
    findings = retention_findings(lambda sql: conn.execute_native(sql).fetchall())
    for check, fine in RETENTION_OK.items():
        found = [f.message for f in findings if f.check == check]
        report.add(check, "warn" if found else "ok", "; ".join(found) if found else fine)
    sizes = {}
    for name, relation_bytes in conn.execute(
            "SELECT relname, pg_total_relation_size(oid) FROM pg_class WHERE relkind = 'r' "
            "AND relnamespace = 'public'::regnamespace ORDER BY relname").fetchall():
        sizes[f"{name} bytes"] = int(relation_bytes)
    sizes["database bytes"] = int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])
    report.sizes = sizes
