"""``agent-memory doctor``: is this store sound, and how big are its logs?

Each check returns ``ok``, ``warn`` or ``fail`` with a plain sentence. ``fail`` means something is
broken or inconsistent (the CLI exits non-zero); ``warn`` means something needs attention but
nothing is wrong yet (logs over their retention size, links made before the entity-scope rule).
Nothing here needs the embedding model, so the doctor runs on a store whose model is missing.

``agent-memory doctor`` (:func:`doctor_target`) opens the store read-only: it never creates,
migrates or repairs anything, so a missing, empty or damaged file is reported as it is (one failed
``store`` check with what to do) and left untouched. A check that hits a damaged page fails with
SQLite's words; the others still run.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .db import Store
from .migrations import MIGRATIONS, applied_migrations

LOG_TABLES = {
    "search_log": ("raw_query", "rewritten_query", "request", "scopes", "trace", "result_ids", "stages"),
    "write_log": ("candidate", "validation", "stages"),
    "events": ("reason", "payload"),
    "extraction_candidates": ("candidate", "review", "detail"),
    "extraction_attempts": ("detail", "stages", "error"),
}

# (check name, SQL counting orphans, what an orphan is)
ORPHANS = (
    ("record links without a record", "SELECT COUNT(*) FROM record_entities re LEFT JOIN records r ON r.id = re.record_id WHERE r.id IS NULL"),
    ("record links without an entity", "SELECT COUNT(*) FROM record_entities re LEFT JOIN entities e ON e.id = re.entity_id WHERE e.id IS NULL"),
    ("aliases without an entity", "SELECT COUNT(*) FROM entity_aliases a LEFT JOIN entities e ON e.id = a.entity_id WHERE e.id IS NULL"),
    ("records whose subject entity is missing", "SELECT COUNT(*) FROM records r LEFT JOIN entities e ON e.id = r.subject_entity_id "
                                                "WHERE r.subject_entity_id IS NOT NULL AND e.id IS NULL"),
    ("turns without a session", "SELECT COUNT(*) FROM turns t LEFT JOIN sessions s ON s.id = t.session_id WHERE s.id IS NULL"),
    ("extraction candidates without a run", "SELECT COUNT(*) FROM extraction_candidates c LEFT JOIN extraction_runs r ON r.id = c.run_id WHERE r.id IS NULL"),
    ("superseded records whose successor is missing", "SELECT COUNT(*) FROM records r LEFT JOIN records n ON n.id = r.superseded_by_id "
                                                      "WHERE r.superseded_by_id IS NOT NULL AND n.id IS NULL"),
)


@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail}


@dataclass
class DoctorReport:
    """Every check's outcome plus table and file sizes."""

    path: str
    checks: list[Check] = field(default_factory=list)
    sizes: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when no check failed (warnings allowed)."""
        return all(c.status != "fail" for c in self.checks)

    @property
    def problems(self) -> list[Check]:
        return [c for c in self.checks if c.status != "ok"]

    def add(self, name: str, status: str, detail: str) -> None:
        self.checks.append(Check(name, status, detail))

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "ok": self.ok, "checks": [c.to_dict() for c in self.checks], "sizes": self.sizes}

    def text(self) -> str:
        """A plain report for a terminal."""
        lines = [f"store {self.path}: {'OK' if self.ok else 'PROBLEMS FOUND'}"]
        for check in self.checks:
            lines.append(f"  [{check.status:>4}] {check.name}: {check.detail}")
        lines.append("  sizes:")
        for name, value in self.sizes.items():
            lines.append(f"    {name}: {value}")
        return "\n".join(lines)


def run_doctor(store: Store, settings=None, *, dim: int | None = None) -> DoctorReport:
    """Run every check on ``store`` (read-only, except FTS5's integrity-check statement, which
    a read-only store skips).

    A check that SQLite cannot run because the file is damaged fails with what SQLite said
    instead of ending the report; the checks after it still run.
    """
    report = DoctorReport(str(store.path))
    if store.backend == "postgresql":
        from .pg.doctor import pg_checks

        with store.lock:
            _guarded(report, "postgresql checks", lambda: pg_checks(store, report), file=False)
            _guarded(report, "unfinished copy", lambda: _unfinished_copy(store, report), file=False)
            for check in (_orphans, _erasure, _entity_scopes):
                _guarded(report, check.__name__.strip("_").replace("_", " "), lambda check=check: check(store.conn, report),
                         file=False)
            _guarded(report, "vectors", lambda: _vectors(store.conn, report, dim), file=False)
            _guarded(report, "change feed", lambda: _feed(store, report), file=False)
        return report
    with store.lock:
        conn = store.conn
        steps = (("sqlite integrity", lambda: _integrity(conn, report)), ("schema", lambda: _schema(conn, report)),
                 ("unfinished copy", lambda: _unfinished_copy(store, report)),
                 ("fts integrity", lambda: _fts_checks(store, report)),
                 ("vectors", lambda: _vectors(conn, report, dim)), ("change feed", lambda: _feed(store, report)),
                 ("orphan rows", lambda: _orphans(conn, report)), ("forgotten records", lambda: _erasure(conn, report)),
                 ("entity link scopes", lambda: _entity_scopes(conn, report)), ("sizes", lambda: _sizes(store, report, settings)))
        for name, step in steps:
            _guarded(report, name, step)
    return report


def doctor_target(target, settings=None) -> DoctorReport:
    """The doctor's report on the store ``target`` names, opened read-only: nothing is created,
    migrated or repaired. A missing, empty, damaged or foreign file is the report's one failed
    check (``store``), with what to do."""
    from ..errors import InvalidInputError, MigrationError, StoreUnusableError
    from .backend import open_store, redact_url

    try:
        store = open_store(target, "", read_only=True)
    except (StoreUnusableError, MigrationError, InvalidInputError) as exc:
        report = DoctorReport(redact_url(str(target)))
        report.add("store", "fail", exc.message)
        return report
    try:
        return run_doctor(store, settings)
    finally:
        store.close()


def _guarded(report: DoctorReport, name: str, step, *, file: bool = True) -> None:
    """Run one check; an error the database raises while reading becomes a failed check of that
    name (``file``: an SQLite file, whose read errors may mean damage)."""
    from .opening import is_damage

    try:
        step()
    except sqlite3.Error as exc:
        if file and is_damage(exc):
            report.add(name, "fail", f"SQLite could not read the store: {exc}; the file is damaged, restore it from a "
                       "backup (agent-memory restore BACKUP --path STORE --yes)")
        else:
            report.add(name, "fail", f"the check could not run: {exc}")


def _unfinished_copy(store, report: DoctorReport) -> None:
    from .transfer import unfinished_copy

    mark = unfinished_copy(store)
    if mark is not None:
        report.add("unfinished copy", "fail", f"this store is the target of a migrate-store that did not finish ({mark}); "
                   "run migrate-store again into it, or remove it")


def _integrity(conn: sqlite3.Connection, report: DoctorReport) -> None:
    rows = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
    report.add("sqlite integrity", "ok" if rows == ["ok"] else "fail", "ok" if rows == ["ok"] else "; ".join(rows[:5]))
    bad = conn.execute("PRAGMA foreign_key_check").fetchall()
    report.add("foreign keys", "ok" if not bad else "fail",
               "every reference resolves" if not bad else f"{len(bad)} row(s) reference missing rows, e.g. table {bad[0][0]}")


def _schema(conn: sqlite3.Connection, report: DoctorReport) -> None:
    applied = set(applied_migrations(conn))
    missing = sorted(set(MIGRATIONS) - applied)
    unknown = sorted(applied - set(MIGRATIONS))
    if unknown:
        report.add("schema", "fail", f"migrations {unknown} come from newer code")
    elif missing:
        report.add("schema", "warn", f"migrations {missing} not applied yet (opening the store applies them)")
    else:
        report.add("schema", "ok", f"all {len(applied)} migrations applied")


def _fts_checks(store: Store, report: DoctorReport) -> None:
    """The FTS checks. FTS5's integrity-check is an INSERT statement, which a read-only connection
    cannot run: for a read-only store it runs on a second connection (``mode=rw``: never creates),
    inside a transaction that is rolled back, and only once SQLite's own integrity check passed
    (a damaged file is not opened for writing)."""
    if not store.read_only:
        return _fts(store.conn, report, store.conn)
    sound = any(c.name == "sqlite integrity" and c.status == "ok" for c in report.checks)
    if not sound:
        return _fts(store.conn, report, None)
    from .urls import sqlite_uri

    side = sqlite3.connect(sqlite_uri(store.path, mode="rw"), uri=True, isolation_level=None, timeout=30.0)
    try:
        side.execute("BEGIN")
        try:
            _fts(store.conn, report, side)
        finally:
            side.execute("ROLLBACK")
    finally:
        side.close()


def _fts(conn: sqlite3.Connection, report: DoctorReport, check: sqlite3.Connection | None) -> None:
    if check is not None:
        try:
            check.execute("INSERT INTO records_fts(records_fts) VALUES('integrity-check')")
            report.add("fts integrity", "ok", "FTS5 index matches its content")
        except sqlite3.DatabaseError as exc:
            if "readonly" in str(exc):  # the file or its folder is write-protected: the check cannot run here
                report.add("fts integrity", "warn", f"FTS5 integrity-check skipped: {exc}")
            else:
                report.add("fts integrity", "fail", f"FTS5 integrity-check: {exc} (repair: INSERT INTO records_fts(records_fts) VALUES('rebuild'))")
    fts = {r[0] for r in conn.execute("SELECT rowid FROM records_fts")}
    live = {r[0] for r in conn.execute("SELECT seq FROM records WHERE status != 'deleted'")}
    extra, missing = fts - live, live - fts
    if extra or missing:
        report.add("fts rows", "fail", f"{len(missing)} record(s) missing from FTS, {len(extra)} FTS row(s) for deleted or absent records")
    else:
        report.add("fts rows", "ok", f"{len(fts)} rows, one per non-deleted record")
    levels = fts_levels(conn)
    if levels is not None:
        status = "ok" if levels < 1000 else "warn"
        report.add("fts structure", status, f"{levels} level(s) in the index structure"
                   + ("" if status == "ok" else "; rebuild the FTS index before SQLite reports it malformed"))


def fts_levels(conn: sqlite3.Connection) -> int | None:
    """Levels in the FTS5 structure record (SQLite's private format; None if unreadable)."""
    try:
        block = conn.execute("SELECT block FROM records_fts_data WHERE id = 10").fetchone()
        if block is None:
            return None
        data = block[0]
        value, i = 0, 4  # after the 4-byte cookie comes the level count as a varint
        for _ in range(9):
            byte = data[i]
            i += 1
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                return value
    except (sqlite3.Error, IndexError, TypeError):
        return None
    return None


def _vectors(conn: sqlite3.Connection, report: DoctorReport, dim: int | None) -> None:
    stored_dim = conn.execute("SELECT value FROM store_meta WHERE key = 'embed_dim'").fetchone()
    expected = dim or (int(stored_dim[0]) if stored_dim else None)
    missing = conn.execute("SELECT COUNT(*) FROM records WHERE status != 'deleted' AND embedding IS NULL").fetchone()[0]
    wrong = 0
    if expected:
        wrong = conn.execute(
            "SELECT COUNT(*) FROM records WHERE status != 'deleted' AND embedding IS NOT NULL AND length(embedding) != ?",
            (expected * 4,),
        ).fetchone()[0]
    models = conn.execute("SELECT DISTINCT embed_model, embed_version FROM records WHERE status != 'deleted'").fetchall()
    meta = (conn.execute("SELECT value FROM store_meta WHERE key = 'embed_model'").fetchone(),
            conn.execute("SELECT value FROM store_meta WHERE key = 'embed_version'").fetchone())
    stored = tuple(m[0] if m else None for m in meta)
    foreign = [tuple(m) for m in models if tuple(m) != stored and stored != (None, None)]
    if missing or wrong or foreign:
        parts = []
        if missing:
            parts.append(f"{missing} live record(s) without an embedding (not searchable by meaning)")
        if wrong:
            parts.append(f"{wrong} embedding(s) of the wrong size (expected {expected} dims)")
        if foreign:
            parts.append(f"records embedded by {foreign} while the store says {stored}; run agent-memory reembed")
        report.add("vectors", "fail", "; ".join(parts))
    else:
        count = conn.execute("SELECT COUNT(*) FROM records WHERE status != 'deleted'").fetchone()[0]
        report.add("vectors", "ok", f"{count} live record(s), each with a {expected}-dim embedding from {stored[0]}")


def _feed(store: Store, report: DoctorReport) -> None:
    version = store.records_version()
    newest = store.conn.execute("SELECT COALESCE(MAX(version), 0) FROM index_changes").fetchone()[0]
    if version != newest:
        report.add("change feed", "fail", f"records_version {version} but the newest change is {newest}: other processes "
                   "may miss changes (reopening every process rebuilds their indexes)")
    else:
        report.add("change feed", "ok", f"records_version {version}")


def _orphans(conn: sqlite3.Connection, report: DoctorReport) -> None:
    found = [(name, conn.execute(sql).fetchone()[0]) for name, sql in ORPHANS]
    bad = [f"{n} {name}" for name, n in found if n]
    report.add("orphan rows", "fail" if bad else "ok", "; ".join(bad) if bad else "none")


def _erasure(conn: sqlite3.Connection, report: DoctorReport) -> None:
    leftovers = conn.execute(
        "SELECT COUNT(*) FROM records WHERE status = 'deleted' AND (content != '' OR evidence IS NOT NULL OR embedding IS NOT NULL "
        "OR attribute IS NOT NULL OR subject IS NOT NULL)"
    ).fetchone()[0]
    report.add("forgotten records", "fail" if leftovers else "ok",
               f"{leftovers} deleted record(s) still hold text or a vector" if leftovers else "every tombstone is empty")
    pending = conn.execute("SELECT value FROM store_meta WHERE key = 'erase_pending'").fetchone()
    if pending and pending[0] == "1":
        report.add("wal erasure", "warn", "a forget's WAL truncation is still waiting for a reader to finish; old page "
                   "images may hold forgotten text until then (the worker retries)")


def _entity_scopes(conn: sqlite3.Connection, report: DoctorReport) -> None:
    cross = conn.execute(
        "SELECT COUNT(*) FROM record_entities re JOIN records r ON r.id = re.record_id JOIN entities e ON e.id = re.entity_id "
        "WHERE r.status != 'deleted' AND (e.scope_kind != r.scope_kind OR e.scope_id != r.scope_id)"
    ).fetchone()[0]
    report.add("entity link scopes", "warn" if cross else "ok",
               f"{cross} link(s) from a record to an entity of another scope (made before the scope rule; hidden from "
               "readers without access and kept out of the record's FTS row)" if cross else
               "every record links only to entities of its own scope")


def _sizes(store: Store, report: DoctorReport, settings) -> None:
    conn = store.conn
    sizes: dict[str, Any] = {}
    for suffix in ("", "-wal", "-shm"):
        path = Path(str(store.path) + suffix)
        if path.exists():
            sizes[f"file{suffix or ''} bytes"] = path.stat().st_size
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    sizes["free pages"] = conn.execute("PRAGMA freelist_count").fetchone()[0]
    sizes["page size"] = page_size
    for table, columns in LOG_TABLES.items():
        expr = " + ".join(f"COALESCE(length({c}), 0)" for c in columns)
        rows, total = conn.execute(f"SELECT COUNT(*), COALESCE(SUM({expr}), 0) FROM {table}").fetchone()
        sizes[f"{table} rows"] = rows
        sizes[f"{table} bytes"] = total
    report.sizes = sizes
    if settings is None:
        return
    retention = settings.housekeeping
    limit = retention.search_log_max_mb
    used_mb = sizes["search_log bytes"] / 1_000_000
    if limit is not None and used_mb > limit:
        report.add("search log size", "warn", f"{used_mb:.1f} MB, over the {limit} MB retention limit; the worker's prune "
                   "pass (or agent-memory prune-logs) trims it")
    else:
        report.add("search log size", "ok", f"{used_mb:.1f} MB" + (f" of {limit} MB allowed" if limit else ""))
