"""Online backups and restores of a store, and snapshots for evaluation starting states.

A backup is ``VACUUM INTO`` from a connection of its own: SQLite copies one read transaction's
view, so the copy is consistent while agents keep writing (WAL readers never block writers),
and it holds only live pages: free pages, where forgotten text was zeroed, are not copied.
The copy is written next to the destination and renamed into place once it checks out, so a
half-written file never carries the backup's name.

A restore copies a checked backup into the live file through SQLite's backup API, which takes
the locks other connections respect, and then appends a ``reset`` to the change feed so every
process rebuilds its vector index on its next search.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidInputError, MigrationError
from ..clock import SystemClock, format_ts
from .migrations import MIGRATIONS, migrate


@dataclass
class BackupInfo:
    """What a backup file holds."""

    path: str
    bytes: int
    records: int
    migrations: list[int]

    def to_dict(self) -> dict:
        return {"path": self.path, "bytes": self.bytes, "records": self.records, "migrations": self.migrations}


def _refuse_postgres(target) -> None:
    # A PostgreSQL store is backed up by the server's own tools (pg_dump, base backups, a managed
    # service's snapshots); migrate-store copies it into an SQLite file when a portable copy is wanted.
    if str(target).startswith(("postgresql://", "postgres://")):
        raise InvalidInputError("backup and restore are for SQLite stores; back a PostgreSQL store up with pg_dump or "
                                "the server's base backups, or copy it to a file with agent-memory migrate-store "
                                "(docs/scaling.md)", field="source")


def backup_store(source: str | Path, destination: str | Path, *, overwrite: bool = False) -> BackupInfo:
    """Write a consistent copy of the store at ``source`` to ``destination`` (online)."""
    _refuse_postgres(source)
    source, destination = Path(source), Path(destination)
    if not source.exists():
        raise InvalidInputError(f"no store at {source}", field="source")
    if destination.resolve() == source.resolve():
        raise InvalidInputError("the backup must not overwrite the store itself", field="destination")
    if destination.exists() and not overwrite:
        raise InvalidInputError(f"{destination} exists; pass overwrite to replace it", field="destination")
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(destination.name + ".partial")
    if partial.exists():
        partial.unlink()
    conn = sqlite3.connect(str(source), isolation_level=None, timeout=30.0)
    try:
        conn.execute("PRAGMA busy_timeout=30000")
        conn.execute("VACUUM INTO ?", (str(partial),))
    finally:
        conn.close()
    try:
        info = check_backup(partial)
    except Exception:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, destination)
    info.path = str(destination)
    return info


def check_backup(path: str | Path) -> BackupInfo:
    """Open ``path`` read-only and check it is a whole store this code can use."""
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"no backup file at {path}", field="backup")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise InvalidInputError(f"{path} is not an SQLite file: {exc}", field="backup") from exc
    try:
        try:
            result = conn.execute("PRAGMA integrity_check").fetchone()[0]
            applied = [r[0] for r in conn.execute("SELECT number FROM schema_migrations ORDER BY number")]
            records = conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        except sqlite3.Error as exc:
            raise InvalidInputError(f"{path} is not an agent-memory store: {exc}", field="backup") from exc
    finally:
        conn.close()
    if result != "ok":
        raise InvalidInputError(f"{path} fails SQLite's integrity check: {result}", field="backup")
    newest = max(MIGRATIONS)
    if applied and max(applied) > newest:
        raise MigrationError(f"the backup is at migration {max(applied)}, newer than this code ({newest})",
                             store_version=max(applied), code_version=newest)
    return BackupInfo(str(path), path.stat().st_size, int(records), applied)


def restore_into(store, backup: str | Path) -> BackupInfo:
    """Replace the content of the open ``store`` with ``backup`` (checked first).

    Runs under the store's lock; other processes see the restored content at their next
    transaction, and the change feed's ``reset`` makes them rebuild their vector index.
    """
    _refuse_postgres(store.path if store.backend == 'sqlite' else 'postgresql://')
    info = check_backup(backup)
    with store.lock:
        before = store.records_version()
        source = sqlite3.connect(f"file:{Path(backup)}?mode=ro", uri=True)
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
