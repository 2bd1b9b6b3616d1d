"""The SQLite connection: one file, WAL mode, foreign keys on, one writer at a time.

A :class:`Store` owns one connection shared by the threads of a process (Streamlit runs pages on
threads) behind a re-entrant lock. Writes go through :meth:`Store.transaction`, which takes
SQLite's write lock up front (``BEGIN IMMEDIATE``) so a multi-statement write is all or nothing.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from ..inputs import loggable
from .json_columns import dumps, dumps_compressed, loads  # noqa: F401 - the JSON columns' codec, used with the store
from .migrations import migrate
from .opening import (BUSY_TIMEOUT_MS, check_wal, close_quietly, connect, damage_guard, pending_migrations, store_file,
                      forget_probe, store_migrations, unattended_wal)

_SAVEPOINT_NAME = re.compile(r"[a-z_][a-z0-9_]*")
T = TypeVar("T")


def _enter_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, retrying while another process holds the lock.

    Changing the journal mode does not go through SQLite's busy handler, so when several
    processes open a fresh file at once the losers get "database is locked" at once; they wait
    and try again instead (bounded by the usual busy timeout).
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() in ("wal", "memory"):
                return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() > deadline:
                raise
        else:
            if time.monotonic() > deadline:
                raise sqlite3.OperationalError(f"could not switch the store to WAL (journal mode stays {mode})")
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def _probe(path: Path) -> sqlite3.Connection:
    """A read-only look at an existing file before it is opened for writing: a store (or blank), not
    damaged, and no WAL of another file beside it. Returned open (see ``Store.open``)."""
    unattended = unattended_wal(path)
    probe = connect(path, read_only=True)
    try:
        store_migrations(probe, path, allow_blank=True)
        check_wal(probe, path, unattended)
    except BaseException:
        forget_probe(probe, path, unattended)
        raise
    return probe


class Store:
    """A migrated SQLite store. (:class:`memory_core.store.pg.store.PgStore` is the PostgreSQL one.)"""

    backend = "sqlite"

    def __init__(self, conn: sqlite3.Connection, path: Path, *, read_only: bool = False,
                 pending: list[int] | None = None) -> None:
        self.conn = conn
        self.path = path
        self.read_only = read_only
        self.pending_migrations = list(pending or [])  # only a read-only open leaves any
        self.lock = threading.RLock()
        self._depth = 0
        self._erase_pending = False
        self._eraser: threading.Thread | None = None
        self._closing = threading.Event()

    @classmethod
    def open(cls, path: str | Path, now: str) -> "Store":
        """Open (creating if needed) and migrate the store at ``path``.

        A new store is made only in a missing or blank file: an SQLite database of something else,
        a damaged file, a directory or a URL is refused (``StoreUnusableError``,
        ``InvalidInputError``) before anything is written to it.
        """
        if str(path) == ":memory:":
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys=ON")
            migrate(conn, now)
            return cls(conn, Path(":memory:"))
        path = store_file(path, must_exist=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        # An existing file is looked at read-only first, and that connection stays open until this
        # one is set up: if the file turns out damaged, closing never checkpoints a WAL into it.
        probe = _probe(path) if path.is_file() and path.stat().st_size else None
        try:
            conn = connect(path, read_only=False)
            try:
                with damage_guard(path):
                    store_migrations(conn, path, allow_blank=True)
                    _enter_wal(conn)
                    conn.execute("PRAGMA foreign_keys=ON")
                    conn.execute("PRAGMA synchronous=NORMAL")
                    # Freed pages are zeroed so forgotten content does not linger in the file.
                    conn.execute("PRAGMA secure_delete=ON")
                    migrate(conn, now)
            except BaseException:
                conn.close()
                raise
        finally:
            if probe is not None:
                probe.close()
        return cls(conn, path)

    @classmethod
    def open_readonly(cls, path: str | Path) -> "Store":
        """Open the existing store at ``path`` without writing to it: nothing is created or migrated.

        A missing, empty, damaged or foreign file raises ``StoreUnusableError``; a store from newer
        code ``MigrationError``. An older store opens with its missing migrations in
        :attr:`pending_migrations` (the caller decides whether it can read it as it is).
        """
        path = store_file(path, must_exist=True)
        unattended = unattended_wal(path)
        conn = connect(path, read_only=True)
        try:
            applied = store_migrations(conn, path, allow_blank=False)
            check_wal(conn, path, unattended)
        except BaseException:
            forget_probe(conn, path, unattended)
            raise
        return cls(conn, path, read_only=True, pending=pending_migrations(applied))

    def close(self) -> None:
        self._closing.set()
        with self.lock:
            if self._erase_pending:
                self.try_truncate_wal()  # last chance in this process; the worker retries otherwise
            self.conn.close()

    def close_quietly(self) -> None:
        """Close without the checkpoint SQLite runs on the last close (for a store found damaged:
        the file and its WAL stay exactly as they were, for a restore or a closer look)."""
        self._closing.set()
        with self.lock:
            close_quietly(self.conn, self.path)

    # -- physical erasure ------------------------------------------------------------------

    def try_truncate_wal(self) -> bool:
        """Checkpoint the WAL into the main file and truncate it, without waiting for anyone.

        A forget rewrites pages, but until a checkpoint copies them into the main file and the
        WAL is emptied, the old page images (holding the forgotten text) are still on disk. A
        TRUNCATE checkpoint must wait for readers of older snapshots, and such a reader is
        entitled to the text until its transaction ends; so this never waits (busy timeout 0):
        it returns False when a reader or writer is in the way, and the caller retries later.
        """
        with self.lock:
            if self._depth:
                return False  # inside a transaction: the caller's commit comes first
            self.conn.execute("PRAGMA busy_timeout=0")
            try:
                row = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                done = row is not None and row[0] == 0
            except sqlite3.OperationalError:
                done = False
            finally:
                self.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            if done:
                self._erase_pending = False
                if self.get_meta("erase_pending") == "1":
                    self.set_meta("erase_pending", "0")  # these new WAL frames hold no forgotten text
            return done

    def erase_soon(self, retry_for_s: float = 600.0) -> bool:
        """Make the forgotten pages leave the disk now, or as soon as readers let go.

        Tries a non-blocking TRUNCATE checkpoint at once; if a reader holds an older snapshot,
        a background thread retries every 50-500 ms (for up to ``retry_for_s``), so a forget
        never waits for a reader and the text is gone shortly after the reader finishes.
        Returns True if the erasure completed immediately.
        """
        self._erase_pending = True
        if self.try_truncate_wal():
            return True
        # Recorded in the store too, so another process's worker finishes it if this one exits.
        self.set_meta("erase_pending", "1")
        with self.lock:
            if self._eraser is not None and self._eraser.is_alive():
                return False
            self._eraser = threading.Thread(target=self._retry_erasure, args=(retry_for_s,), daemon=True,
                                            name=f"wal-eraser:{self.path.name}")
            self._eraser.start()
        return False

    def _retry_erasure(self, retry_for_s: float) -> None:
        deadline = time.monotonic() + retry_for_s
        delay = 0.05
        while not self._closing.is_set() and time.monotonic() < deadline:
            if self._closing.wait(delay):
                return
            try:
                if self.try_truncate_wal():
                    return
            except sqlite3.ProgrammingError:  # closed underneath us
                return
            delay = min(delay * 1.5, 0.5)

    @property
    def erase_pending(self) -> bool:
        """True while forgotten text may still be in the WAL (a reader held an older snapshot)."""
        return self._erase_pending

    BEGIN = "BEGIN IMMEDIATE"  # SQLite: take the write lock at the start, not at the first write

    @contextmanager
    def transaction(self, scopes: Iterable[str] | None = None) -> Iterator[sqlite3.Connection]:
        """A write transaction; nested use joins the outer one.

        ``scopes`` names the owner scopes (``"user:alice"``) whose records and entities the
        transaction reads to decide and then changes; ``()`` says it only appends rows nobody
        checks (a log row); ``None`` (the default) claims the whole store. SQLite's write lock is
        one for the file whatever is named; PostgreSQL locks just what is named (see
        docs/store.md, "Concurrent writers on PostgreSQL")."""
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            self.conn.execute(self.BEGIN)
            self._depth = 1
            try:
                yield self.conn
            except BaseException:
                self._depth = 0
                self.conn.execute("ROLLBACK")
                raise
            else:
                self._depth = 0
                self.conn.execute("COMMIT")

    def covers(self, scopes: Iterable[str]) -> bool:
        """Inside a transaction: whether it holds the locks of ``scopes`` (SQLite's holds all)."""
        return True

    def require_scopes(self, scopes: Iterable[str]) -> None:
        """Inside a transaction: raise :class:`LocksTooNarrow` unless it holds ``scopes``' locks (what
        it read shows it must change more scopes than it locked: :meth:`run_locked` retries)."""
        if not self.covers(scopes):
            raise LocksTooNarrow(scopes)

    def run_locked(self, scopes: Iterable[str], body: Callable[[Any], T]) -> T:
        """``body(conn)`` in a transaction locking ``scopes``; when the body finds it needs more
        (``require_scopes``), it is rolled back and run again with those too, every lock taken in
        the fixed order at the start (after three tries, with the whole store)."""
        wanted = set(scopes)
        for _ in range(3):
            try:
                with self.transaction(wanted) as conn:
                    return body(conn)
            except LocksTooNarrow as grew:
                wanted |= grew.scopes
        with self.transaction() as conn:
            return body(conn)

    def batched_transaction(self):
        """A write transaction whose statements' results nobody reads (a search's log row). On SQLite
        it is :meth:`transaction`; PostgreSQL sends such a transaction in one round trip."""
        return self.transaction()

    def query(self, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    def query_one(self, sql: str, params: Any = ()) -> sqlite3.Row | None:
        with self.lock:
            return self.conn.execute(sql, params).fetchone()

    def scalar(self, sql: str, params: Any = ()) -> Any:
        row = self.query_one(sql, params)
        return None if row is None else row[0]

    # -- metadata --------------------------------------------------------------------------

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        value = self.scalar("SELECT value FROM store_meta WHERE key = ?", (key,))
        return default if value is None else value

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO store_meta (key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # -- change feed -----------------------------------------------------------------------

    def bump(self, conn: sqlite3.Connection, record_seq: int, op: str = "upsert") -> int:
        """Append a change for ``record_seq`` to the index feed; returns the new records_version.

        Must be called inside the transaction that changed the record.
        """
        cur = conn.execute("INSERT INTO index_changes (record_seq, op) VALUES (?, ?)", (record_seq, op))
        version = int(cur.lastrowid)
        conn.execute(
            "INSERT INTO store_meta (key, value) VALUES ('records_version', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (str(version),),
        )
        return version

    def records_version(self) -> int:
        value = self.scalar("SELECT value FROM store_meta WHERE key = 'records_version'")
        return int(value) if value is not None else 0

    # -- logs ------------------------------------------------------------------------------

    # -- savepoints: part of a transaction undone, the rest kept ---------------------------------

    def savepoint(self, conn: sqlite3.Connection, name: str) -> Any:
        """``SAVEPOINT name`` inside the current transaction; returns the mark :meth:`rollback_to`
        needs. Use exactly one of :meth:`release` or :meth:`rollback_to` afterwards."""
        if not _SAVEPOINT_NAME.fullmatch(name):
            raise ValueError(f"not a savepoint name: {name!r}")
        conn.execute(f"SAVEPOINT {name}")
        return None

    def release(self, conn: sqlite3.Connection, name: str) -> None:
        """Keep what was written since :meth:`savepoint`."""
        conn.execute(f"RELEASE {name}")

    def rollback_to(self, conn: sqlite3.Connection, name: str, mark: Any) -> None:
        """Undo what was written since :meth:`savepoint` (``mark`` is what it returned); the
        transaction goes on."""
        conn.execute(f"ROLLBACK TO {name}")
        conn.execute(f"RELEASE {name}")

    def append_event(
        self,
        conn: sqlite3.Connection,
        *,
        at: str,
        kind: str,
        actor: str,
        record_id: str | None = None,
        entity_id: str | None = None,
        reason: str | None = None,
        payload: dict[str, Any] | None = None,
    ) -> int:
        """Append one row to the event log (inside the caller's transaction). Outside text (an
        actor, a reason, an error quoted in one) is stored in its ``loggable`` form, so an event
        about bad input never fails to be written."""
        actor, reason, payload = loggable([actor, reason, payload or {}])
        cur = conn.execute(
            "INSERT INTO events (at, kind, actor, record_id, entity_id, reason, payload) VALUES (?,?,?,?,?,?,?)",
            (at, kind, actor, record_id, entity_id, reason, dumps(payload)),
        )
        return int(cur.lastrowid)


ERASURE_LOCK = "~erasure"  # named by every forget: forgets redact shared log rows, so they take turns


class LocksTooNarrow(Exception):
    """A transaction found it must change scopes it did not lock (internal: ``run_locked`` retries)."""

    def __init__(self, scopes: Iterable[str]) -> None:
        super().__init__(f"needs the locks of {sorted(scopes)}")
        self.scopes = set(scopes)
