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
   the test server runs that way and the doctor reports the setting.

What the pass cannot erase it says, in ``not_erased`` (and ``agent-memory doctor`` checks the same
conditions, :func:`retention_findings`): WAL a replication slot (physical or logical) still needs,
old WAL kept by ``wal_keep_size``, segments copied by WAL archiving, and what standbys or WAL
receivers streamed. It also counts the WAL segments from before its checkpoint that are still in
``pg_wal/`` (when the role may list that directory), so "old WAL segments removed" is only said
when it is true. Base backups are the operator's copies: see docs/scaling.md.

``VACUUM FULL`` takes an exclusive lock per table for its rewrite (about a second at 50K records,
see benchmarks/README.md), so it never waits long for one: ``lock_timeout`` makes it give up, and
the pass is retried until it succeeds. Step 3 needs the right to run CHECKPOINT and switch WAL
(superuser or ``pg_checkpoint`` + an EXECUTE grant); without it the report says the WAL was left
to the server's own checkpoints.
"""

from __future__ import annotations

import time
from collections.abc import Callable
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
    """What one erasure pass did, what it could not erase, and how long it took.

    ``done`` means the pass ran to its end (nothing to retry); ``complete`` that it also left no
    copy it knows of (``not_erased`` is empty).
    """

    done: bool = False
    blocked_by: str | None = None
    tables: list[str] = field(default_factory=list)
    wal_rotated: bool = False
    wal_note: str = ""
    old_wal_segments_left: int | None = None  # None: the role may not list pg_wal/
    not_erased: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return self.done and not self.not_erased

    def to_dict(self) -> dict:
        return {"done": self.done, "complete": self.complete, "blocked_by": self.blocked_by, "tables": self.tables,
                "wal_rotated": self.wal_rotated, "wal_note": self.wal_note, "old_wal_segments_left": self.old_wal_segments_left,
                "not_erased": self.not_erased, "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class Finding:
    """A place outside the pass's reach that may keep forgotten text: which check, and a sentence."""

    check: str
    message: str


Query = Callable[[str], list]  # runs PostgreSQL SQL, returns its rows


def retention_findings(query: Query, redo_lsn: str | None = None) -> list[Finding]:
    """Replication slots, WAL archiving, standbys and WAL receivers, and ``wal_keep_size``: each
    keeps WAL (or a copy of it) that a forget's erasure pass cannot remove. With ``redo_lsn`` (the
    pass's last checkpoint) only slots that still hold WAL from before it are reported."""
    found: list[Finding] = []
    slots = query("SELECT slot_name, slot_type, plugin, database, active, restart_lsn::text, "
                  "COALESCE(wal_status, '') FROM pg_replication_slots WHERE restart_lsn IS NOT NULL"
                  + (f" AND restart_lsn < '{redo_lsn}'::pg_lsn" if redo_lsn else "") + " ORDER BY slot_name")
    for name, kind, plugin, database, active, restart, status in slots:
        state = "active" if active else "inactive"
        if kind == "logical":
            found.append(Finding("replication slots", (
                f"logical replication slot '{name}' (plugin {plugin}, database {database}, {state}) keeps WAL from {restart}: "
                "the changes decoded from it carry the forgotten rows' text to its subscriber, and pg_wal/ keeps the "
                "segments until it advances or is dropped (pg_drop_replication_slot)")))
        else:
            found.append(Finding("replication slots", (
                f"physical replication slot '{name}' ({state}{', ' + status if status else ''}) keeps WAL from {restart}: "
                "the segments holding forgotten text stay in pg_wal/ until the slot advances or is dropped "
                "(pg_drop_replication_slot); whatever streams from it keeps its own copy")))
    settings = dict(query("SELECT name, setting FROM pg_settings WHERE name IN "
                          "('archive_mode', 'archive_command', 'archive_library', 'wal_keep_size')"))
    if settings.get("archive_mode", "off") != "off":
        how = settings.get("archive_library") or settings.get("archive_command") or "(nothing set: segments wait in pg_wal/)"
        found.append(Finding("wal archiving", (
            f"WAL archiving is on (archive_mode = {settings['archive_mode']}, {how}): archived segments keep the "
            "forgotten text; only the archive's own retention removes them")))
    if int(settings.get("wal_keep_size") or 0) > 0:
        found.append(Finding("wal_keep_size", (
            f"wal_keep_size = {settings['wal_keep_size']} MB keeps that much old WAL in pg_wal/: segments within it "
            "are not removed by the pass (set it to 0, or rely on replication slots)")))
    senders = query("SELECT COALESCE(NULLIF(application_name, ''), 'unnamed'), COALESCE(state, 'unknown') "
                    "FROM pg_stat_replication ORDER BY 1")
    if senders:
        names = ", ".join(f"{app} ({state})" for app, state in senders)
        found.append(Finding("standbys", (
            f"{len(senders)} standby(s) or WAL receiver(s) streaming from this server: {names}: each keeps its own "
            "copy of the WAL (and a standby its data files until it replays the rewrite); erase there too")))
    return found


def old_wal_segments(query: Query, redo_lsn: str) -> int | None:
    """WAL segment files in pg_wal/ older than the one holding ``redo_lsn`` (None if the role may not look)."""
    try:
        rows = query("SELECT count(*) FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$' "
                     f"AND substr(name, 9) < substr(pg_walfile_name('{redo_lsn}'::pg_lsn), 9)")
    except psycopg.errors.InsufficientPrivilege:
        return None
    return int(rows[0][0])


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
        except psycopg.errors.InsufficientPrivilege as exc:
            report.wal_note = f"WAL left to the server's own checkpoints ({exc.diag.message_primary})"
        _report_what_stays(conn, report)
    report.done = True
    report.seconds = time.monotonic() - started
    return report


def _report_what_stays(conn: psycopg.Connection, report: ErasureReport) -> None:
    """Fill ``wal_note``, ``old_wal_segments_left`` and ``not_erased`` after the rotation."""
    def query(sql: str) -> list:
        return conn.execute(sql).fetchall()

    redo = query("SELECT redo_lsn::text FROM pg_control_checkpoint()")[0][0] if report.wal_rotated else None
    report.not_erased = [f.message for f in retention_findings(query, redo)]
    if not report.wal_rotated:
        return
    recycle = query("SELECT setting FROM pg_settings WHERE name = 'wal_recycle'")
    report.old_wal_segments_left = old_wal_segments(query, redo)
    if report.old_wal_segments_left:
        report.wal_note = f"{report.old_wal_segments_left} WAL segment(s) from before the pass are still in pg_wal/"
        if not report.not_erased:
            report.not_erased.append(f"{report.wal_note}, kept by the server for a reason this pass does not know")
    elif recycle and recycle[0][0] != "off":
        report.wal_note = "old WAL segments recycled (wal_recycle is on: their bytes stay until overwritten)"
        report.not_erased.append("wal_recycle is on: recycled WAL segments keep their old bytes until overwritten")
    else:
        report.wal_note = "old WAL segments removed" + (" from pg_wal/" if report.old_wal_segments_left == 0 else "")
