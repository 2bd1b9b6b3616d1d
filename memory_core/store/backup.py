"""Online backups and restores of a store, and snapshots for evaluation starting states.

A backup is ``VACUUM INTO`` from a read-only connection of its own: SQLite copies one read
transaction's view, so the copy is consistent while agents keep writing (WAL readers never block
writers), and it holds only live pages: free pages, where forgotten text was zeroed, are not
copied. The copy is written next to the destination and renamed into place once it checks out, so
a half-written file never carries the backup's name.

A restore first checks the backup (SQLite's integrity check, an agent-memory schema this code
knows, no unfinished-copy mark) and refuses one that holds no records unless told explicitly
(``allow_empty``): an empty file that some tool turned into an empty store must never silently
replace a real one. :func:`store_counts` says what a store holds, so a person sees what a restore
would take away before saying yes. It then copies the backup into the live file through SQLite's
backup API, which takes the locks other connections respect, and appends a ``reset`` to the
change feed so every process rebuilds its vector index on its next search. A store file that is
missing, empty or damaged cannot take part in that: :func:`restore_file` keeps the damaged file
(and its ``-wal``/``-shm``) under a ``.damaged-<time>`` name and puts a copy of the backup in its place.

Every connection here opens its file by an escaped ``file:`` URI (:mod:`.urls`), so a path with
``?``, ``#`` or ``%`` in it is the file that is read and written.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from ..clock import SystemClock, format_ts
from ..errors import InvalidInputError, StoreUnusableError
from .migrations import migrate
from .opening import connect, damage_guard, store_file, store_migrations
from .urls import file_path, sqlite_uri

# What a store holds, as a person would count it (what a restore would take away).
COUNTS = (
    ("records", "SELECT COUNT(*) FROM records"),
    ("live records", "SELECT COUNT(*) FROM records WHERE status != 'deleted'"),
    ("entities", "SELECT COUNT(*) FROM entities"),
    ("grants", "SELECT COUNT(*) FROM grants"),
    ("sessions", "SELECT COUNT(*) FROM sessions"),
    ("turns", "SELECT COUNT(*) FROM turns"),
    ("events", "SELECT COUNT(*) FROM events"),
)


@dataclass
class BackupInfo:
    """What a backup file holds."""

    path: str
    bytes: int
    records: int
    migrations: list[int]
    counts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"path": self.path, "bytes": self.bytes, "records": self.records, "migrations": self.migrations,
                "counts": self.counts}


def refuse_postgres(target) -> None:
    """Refuse a PostgreSQL target, saying how such a store is backed up."""
    # A PostgreSQL store is backed up by the server's own tools (pg_dump, base backups, a managed
    # service's snapshots); migrate-store copies it into an SQLite file when a portable copy is wanted.
    if str(target).startswith(("postgresql://", "postgres://")):
        raise InvalidInputError("backup and restore are for SQLite stores; back a PostgreSQL store up with pg_dump or "
                                "the server's base backups, or copy it to a file with agent-memory migrate-store "
                                "(docs/scaling.md)", field="source")


def store_counts(store_or_conn) -> dict[str, int]:
    """How many records (and live ones), entities, grants, sessions, turns and events a store holds."""
    conn = getattr(store_or_conn, "conn", store_or_conn)
    return {name: int(conn.execute(sql).fetchone()[0]) for name, sql in COUNTS}


def describe_counts(counts: dict[str, int]) -> str:
    """``1200 records (1100 live), 4 entities, ...`` for a message."""
    rest = ", ".join(f"{counts[name]} {name}" for name, _ in COUNTS[2:])
    return f"{counts['records']} records ({counts['live records']} live), {rest}"


def backup_store(source: str | Path, destination: str | Path, *, overwrite: bool = False) -> BackupInfo:
    """Write a consistent copy of the store at ``source`` to ``destination`` (online)."""
    refuse_postgres(source)
    destination = file_path(destination, field="destination", what="the backup file to write")
    source = store_file(source, must_exist=True)
    if destination.resolve() == source.resolve():
        raise InvalidInputError("the backup must not overwrite the store itself", field="destination")
    if destination.exists() and not overwrite:
        raise InvalidInputError(f"{destination} exists; pass overwrite to replace it", field="destination")
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(destination.name + ".partial")
    if partial.exists():
        partial.unlink()
    from .db import Store

    store = Store.open_readonly(source)  # a store, not visibly damaged, no foreign WAL beside it
    try:
        with damage_guard(source):
            store.conn.execute("PRAGMA query_only=OFF")  # VACUUM INTO writes the copy; mode=ro keeps the source as it is
            store.conn.execute("VACUUM INTO ?", (sqlite_uri(partial),))
    finally:
        store.close()
    try:
        info = check_backup(partial)
    except Exception:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, destination)
    info.path = str(destination)
    return info


def check_backup(path: str | Path) -> BackupInfo:
    """Open ``path`` read-only and check it is a whole store this code can use (``InvalidInputError``
    or ``MigrationError`` otherwise; nothing is written to it)."""
    from .transfer import INCOMPLETE

    try:
        path = store_file(path, must_exist=True)
        conn = connect(path, read_only=True)
    except (StoreUnusableError, InvalidInputError) as exc:
        raise InvalidInputError(f"not a usable backup: {exc.message}", field="backup") from exc
    try:
        try:
            store_migrations(conn, path, allow_blank=False)
            result = conn.execute("PRAGMA integrity_check").fetchone()[0]
            applied = [r[0] for r in conn.execute("SELECT number FROM schema_migrations ORDER BY number")]
            counts = store_counts(conn) if result == "ok" else {}
            mark = conn.execute("SELECT value FROM store_meta WHERE key = ?", (INCOMPLETE,)).fetchone()
        except StoreUnusableError as exc:
            said = (f"it is damaged ({exc.details.get('sqlite_error')})" if exc.problem == "damaged" else exc.message)
            raise InvalidInputError(f"{path} is not a usable backup: {said}", field="backup") from exc
        except sqlite3.Error as exc:
            raise InvalidInputError(f"{path} is not an agent-memory store: {exc}", field="backup") from exc
    finally:
        conn.close()
    if result != "ok":
        raise InvalidInputError(f"{path} fails SQLite's integrity check: {result}", field="backup")
    if mark is not None:
        raise InvalidInputError(f"{path} is an unfinished migrate-store target ({mark[0]}), not a backup", field="backup")
    return BackupInfo(str(path), path.stat().st_size, counts["records"], applied, counts)


def refuse_empty(info: BackupInfo, allow_empty: bool) -> None:
    """Refuse a backup without records unless ``allow_empty`` says an empty store is wanted."""
    if info.records == 0 and not allow_empty:
        raise InvalidInputError(f"the backup {info.path} holds no records; restoring it would leave the store empty. "
                                "If that is what you want, say so explicitly (--allow-empty, or allow_empty=True)",
                                field="backup")


def restore_into(store, backup: str | Path, *, allow_empty: bool = False) -> BackupInfo:
    """Replace the content of the open ``store`` with ``backup`` (checked first; a backup without
    records only with ``allow_empty``).

    Runs under the store's lock; other processes see the restored content at their next
    transaction, and the change feed's ``reset`` makes them rebuild their vector index.
    """
    refuse_postgres(store.path if store.backend == 'sqlite' else 'postgresql://')
    info = check_backup(backup)
    refuse_empty(info, allow_empty)
    if Path(info.path).resolve() == Path(store.path).resolve():
        raise InvalidInputError("the backup is the store itself", field="backup")
    with store.lock:
        before = store.records_version()
        source = connect(Path(info.path), read_only=True)
        try:
            source.backup(store.conn)
        finally:
            source.close()
        # The restored file brings its own (older) feed; move past every version any process saw.
        with store.transaction() as conn:
            restored = int(conn.execute("SELECT COALESCE(MAX(version), 0) FROM index_changes").fetchone()[0])
            version = max(before, restored) + 1
            conn.execute("INSERT INTO index_changes (version, record_seq, op) VALUES (?, 0, 'reset')", (version,))
            conn.execute(
                "INSERT INTO store_meta (key, value) VALUES ('records_version', ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (str(version),),
            )
        migrate(store.conn, format_ts(SystemClock().now()))  # a backup from older code is brought up to date
    return info


def restore_file(target: str | Path, backup: str | Path, *, allow_empty: bool = False) -> tuple[BackupInfo, Path | None]:
    """Put a copy of ``backup`` (checked first) at ``target``, a store file that is missing, empty or
    damaged and so cannot be opened to restore into. The file there (with its ``-wal`` and ``-shm``:
    a stale WAL must never be applied to the restored file) is kept as ``<name>.damaged-<time>``,
    whose path is returned with the backup's info. Processes that still have the old file open keep
    it: restart them."""
    refuse_postgres(target)
    info = check_backup(backup)
    refuse_empty(info, allow_empty)
    target = store_file(target, must_exist=False)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".restoring")
    partial.unlink(missing_ok=True)
    source = connect(Path(info.path), read_only=True)
    try:
        copy = connect(partial, read_only=False)
        try:
            source.backup(copy)
        finally:
            copy.close()
    finally:
        source.close()
    kept = None
    if target.exists() or any(Path(f"{target}{s}").exists() for s in ("-wal", "-shm")):
        stamp = format_ts(SystemClock().now()).replace(":", "").replace(".", "-")
        kept = target.with_name(f"{target.name}.damaged-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            if Path(f"{target}{suffix}").exists():
                os.replace(f"{target}{suffix}", f"{kept}{suffix}")
    os.replace(partial, target)
    from .db import Store

    Store.open(target, format_ts(SystemClock().now())).close()  # WAL mode, and migrations of newer code
    return info, kept
