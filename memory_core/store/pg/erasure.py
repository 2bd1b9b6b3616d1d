"""Physical erasure on PostgreSQL: the pass that makes forgotten text leave the server's files.

A forget's transaction deletes and overwrites rows, but PostgreSQL keeps the old row versions
(dead tuples) in the table and index files until they are vacuumed, keeps keys in GIN and B-tree
pages after their rows are gone, and keeps the original inserts (and full-page images) in the
write-ahead log until its segments are removed. The pass, run after a forget:

1. waits until no other session of this database holds a snapshot taken before the forget
   committed (such a reader may still see the old rows; VACUUM would have to keep them);
2. ``VACUUM FULL`` on every table a forget writes: each is rewritten into new files holding only
   live rows, its indexes rebuilt, and the old files unlinked (a plain VACUUM only marks space
   free: the bytes, and GIN keys, can stay);
3. ``CHECKPOINT``, ``pg_switch_wal()``, ``CHECKPOINT`` twice, so every WAL segment written before
   the forget is older than the redo point and is removed. Removed, not recycled, only with the
   server setting ``wal_recycle = off`` (a recycled segment keeps its old bytes until overwritten);
   the test server runs that way and the doctor reports the setting. WAL archives, replicas' WAL
   and base backups are copies the operator keeps: see docs/scaling.md.

``VACUUM FULL`` takes an exclusive lock per table for its rewrite (about a second at 50K records,
see benchmarks/README.md), so it never waits long for one: ``lock_timeout`` makes it give up, and
the pass is retried until it succeeds. Step 3 needs the right to run CHECKPOINT and switch WAL
(superuser or ``pg_checkpoint`` + an EXECUTE grant); without it the report says the WAL was left
to the server's own checkpoints.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import psycopg

# Tables a forget writes or deletes from (see ingest/erasure.py), in dependency-free order.
ERASE_TABLES = (
    "records", "records_fts", "record_entities", "entities", "entity_aliases", "procedures", "turns",
    "events", "write_log", "search_log", "extraction_candidates", "extraction_attempts", "extraction_runs",
    "sessions", "index_changes", "store_meta", "ambient_decisions", "session_context", "host_memory_decisions",
)


@dataclass
class ErasureReport:
    """What one erasure pass did, and how long it took."""

    done: bool = False
    blocked_by: str | None = None
    tables: list[str] = field(default_factory=list)
    wal_rotated: bool = False
    wal_note: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"done": self.done, "blocked_by": self.blocked_by, "tables": self.tables, "wal_rotated": self.wal_rotated,
                "wal_note": self.wal_note, "seconds": round(self.seconds, 3)}


def older_snapshots(conn: psycopg.Connection, forget_xid: int | None) -> int:
    """Other sessions of this database whose snapshot predates the forget (they may see its rows)."""
    if forget_xid is None:
        sql = ("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
               "AND backend_xmin IS NOT NULL")
        return int(conn.execute(sql).fetchone()[0])
    sql = ("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
           "AND backend_xmin IS NOT NULL AND age(backend_xmin) >= age((%s::bigint %% 4294967296)::text::xid)")
    return int(conn.execute(sql, (forget_xid,)).fetchone()[0])


def erase_pass(url: str, forget_xid: int | None, *, lock_timeout_ms: int = 2000) -> ErasureReport:
    """Run the erasure pass once (see the module docstring); ``done`` is False if it must be retried."""
    started = time.monotonic()
    report = ErasureReport()
    with psycopg.connect(url, autocommit=True) as conn:
        waiting = older_snapshots(conn, forget_xid)
        if waiting:
            report.blocked_by = f"{waiting} session(s) hold a snapshot from before the forget"
            report.seconds = time.monotonic() - started
            return report
        conn.execute(f"SET lock_timeout = {int(lock_timeout_ms)}")
        for table in ERASE_TABLES:
            try:
                conn.execute(f"VACUUM FULL {table}")
            except psycopg.errors.LockNotAvailable:
                report.blocked_by = f"table {table} stayed locked for {lock_timeout_ms} ms"
                report.seconds = time.monotonic() - started
                return report
            report.tables.append(table)
        try:
            for _ in range(2):
                conn.execute("CHECKPOINT")
                conn.execute("SELECT pg_switch_wal()")
            conn.execute("CHECKPOINT")
            report.wal_rotated = True
            recycle = conn.execute("SELECT setting FROM pg_settings WHERE name = 'wal_recycle'").fetchone()
            report.wal_note = ("old WAL segments removed" if recycle and recycle[0] == "off" else
                               "old WAL segments recycled (wal_recycle is on: their bytes stay until overwritten)")
        except psycopg.errors.InsufficientPrivilege as exc:
            report.wal_note = f"WAL left to the server's own checkpoints ({exc.diag.message_primary})"
    report.done = True
    report.seconds = time.monotonic() - started
    return report
