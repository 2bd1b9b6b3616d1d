"""The PostgreSQL store: the same interface as :class:`memory_core.store.db.Store`.

What differs from SQLite, and why:

- **Writers.** SQLite lets one writer in at a time (``BEGIN IMMEDIATE``); the write path relies on
  that (the duplicate search and the insert of a record must not interleave with another
  writer's). Here a write transaction takes transaction-scoped advisory locks on the owner
  scopes it decides on (:mod:`.locks`), so writers of the same scope queue exactly as they do on
  SQLite while writers of different scopes run side by side, and readers never wait. The change
  feed's version is assigned at COMMIT (:meth:`PgStore.bump`), so no row is held by every writer
  for its whole transaction.
- **Reads** run in autocommit mode: each statement sees everything committed before it, so a
  search sees other processes' writes at once. There is no in-memory index to refresh.
- **Erasure** after a forget is :mod:`.erasure`'s pass, run on a background thread (coalescing
  forgets that arrive within ``postgres.erase_delay_s``) and recorded in ``store_meta`` so any
  process's maintenance pass finishes it if this one exits.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from contextlib import contextmanager
from typing import Any
from datetime import datetime, timezone

import psycopg

from ...clock import format_ts
from ..urls import redact_url
from ...inputs import loggable
from ..db import Store, dumps
from .connection import PgConnection, _params, as_sqlite_error
from .translate import translate
from .erasure import ErasureReport, erase_pass
from .locks import FLUSH_CHANGES, covers, held_by, lock_statements
from .schema import PG_MIGRATIONS, pg_migrate

log = logging.getLogger(__name__)


def _now() -> str:
    return format_ts(datetime.now(timezone.utc))  # the store has no injected clock; the host's time


class _PerThread:
    """An attribute with one value per thread: a transaction's state belongs to the thread running
    it (with a pool, threads run transactions side by side on their own connections)."""

    def __init__(self, default) -> None:
        self.default = default

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def _local(self, obj) -> threading.local:
        local = obj.__dict__.get("_thread_state")
        if local is None:
            local = obj.__dict__.setdefault("_thread_state", threading.local())
        return local

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        local = self._local(obj)
        if not hasattr(local, self.name):
            setattr(local, self.name, self.default() if callable(self.default) else self.default)
        return getattr(local, self.name)

    def __set__(self, obj, value) -> None:
        setattr(self._local(obj), self.name, value)


class PgStore(Store):
    """A migrated PostgreSQL store: one connection per process, shared by its threads, or a pool of
    them (:meth:`use_pool`) for a process serving many sessions at once."""

    backend = "postgresql"
    _depth = _PerThread(0)
    _held = _PerThread(None)
    _changes = _PerThread(list)
    _deferred = _PerThread(list)

    @property
    def conn(self) -> PgConnection:  # type: ignore[override]
        """The connection this thread uses: its leased one inside ``with store.lock`` when pooled,
        else the store's own."""
        lease = self.__dict__.get("_lease")
        if lease is not None:
            leased = lease.current()
            if leased is not None:
                return leased
        return self.__dict__["_home"]

    @conn.setter
    def conn(self, value: PgConnection) -> None:
        self.__dict__["_home"] = value

    def use_pool(self, min_size: int, max_size: int) -> None:
        """Serve threads from a pool of ``min_size``..``max_size`` connections (:mod:`.pool`) instead
        of the one connection. Call right after opening, before other threads use the store."""
        from weakref import WeakKeyDictionary

        from .pool import Lease

        if self.__dict__.get("_lease") is not None:
            return
        home = self.__dict__["_home"]
        wrapped: WeakKeyDictionary = WeakKeyDictionary()

        def wrap(raw):
            conn = wrapped.get(raw)
            if conn is None:
                conn = wrapped[raw] = PgConnection(raw=raw, family=home.family)
            conn.bring_up_to_date()
            return conn

        lease = Lease(self.url, min_size, max_size, wrap)
        self.__dict__["_lease"] = lease
        self.lock = lease  # type: ignore[assignment]

    def __init__(self, conn: PgConnection, url: str) -> None:  # type: ignore[override]
        super().__init__(conn, redact_url(url))  # type: ignore[arg-type]
        self.url = url
        self.erase_delay_s = 0.0
        self.last_erasure: ErasureReport | None = None
        self._erase_lock = threading.Lock()
        self._held: frozenset[str] | None = None  # the scopes the open transaction locked (None: all)
        self._changes: list[tuple[int, str]] = []  # change-feed rows queued by bump() until COMMIT
        self._deferred: list[tuple[str, object]] = []  # event rows queued by append_event() until COMMIT

    @classmethod
    def open(cls, url: str, now: str) -> "PgStore":  # type: ignore[override]
        """Connect to ``url`` (``postgresql://...``) and apply the PostgreSQL migrations."""
        conn = PgConnection(url)
        try:
            pg_migrate(conn, now)
        except BaseException:
            conn.close()
            raise
        return cls(conn, url)

    @classmethod
    def open_readonly(cls, url: str) -> "PgStore":  # type: ignore[override]
        """Connect to ``url`` with every transaction READ ONLY: nothing is created or migrated, and a
        database without an agent-memory schema is refused (``StoreUnusableError``)."""
        conn = PgConnection(url)
        try:
            conn.execute_native("SET default_transaction_read_only = on")
            applied = _applied_migrations(conn, url)
        except BaseException:
            conn.close()
            raise
        store = cls(conn, url)
        store.read_only = True
        store.pending_migrations = sorted(set(PG_MIGRATIONS) - set(applied))
        return store

    def close(self) -> None:
        self._closing.set()
        lease = self.__dict__.get("_lease")
        if lease is not None:
            lease.close()
            self.__dict__["_home"].close()
            return
        with self.lock:
            self.conn.close()

    @contextmanager
    def transaction(self, scopes: Iterable[str] | None = None):
        """A write transaction holding the advisory locks ``scopes`` names (:mod:`.locks`): the
        whole store by default, else those owner scopes (and the store shared). BEGIN and the locks
        go to the server with the body's first statement, in front of it (one round trip, and that
        statement already runs under the locks); the change feed rows queued by :meth:`bump`, the
        statements the connection deferred and COMMIT in one more. Nested use joins the outer transaction, which must already hold the locks."""
        with self.lock:
            if self._depth:
                if not covers(self._held, scopes):
                    raise RuntimeError(f"a nested transaction wants {sorted(scopes) if scopes is not None else 'the whole store'}"
                                       f" but the outer one holds only {sorted(self._held or ())}")
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            # BEGIN and the locks are queued, not sent: they travel with the transaction's first
            # statement (usually its first read), in order, so that read still runs under the locks.
            self.conn.deferred.extend((sql, params, None) for sql, params in [("BEGIN", None), *lock_statements(scopes)])
            self.conn.in_transaction = True
            self._depth, self._held, self._changes, self._deferred = 1, held_by(scopes), [], []
            try:
                yield self.conn
            except BaseException:
                self._depth = 0
                self._rollback()
                raise
            self._depth = 0
            closing = [*self._deferred]
            if self._changes:
                seqs, ops = zip(*self._changes)
                closing.append((FLUSH_CHANGES, {"n": len(seqs), "seqs": list(seqs), "ops": list(ops)}))
            closing.append(("COMMIT", ()))
            self._changes, self._deferred = [], []
            self._send(closing)

    def _send(self, statements: list[tuple[str, object]]) -> None:
        """Statements sent together in pipeline mode (one round trip), after any the connection has
        queued (:meth:`PgConnection.defer`, the transaction's BEGIN and locks); any failure rolls back."""
        raw = self.conn.raw
        queued, self.conn.deferred = self.conn.deferred, []
        self.conn.statements += 1
        try:
            with raw.pipeline():
                cursors = [raw.execute(statement, params or None) for statement, params, _ in queued]
                for statement, params in statements:
                    raw.execute(statement, params or None)
            self.conn.in_transaction = False
        except psycopg.Error as exc:
            self._rollback()
            raise as_sqlite_error(exc) from exc
        for cur, (_, _, pending) in zip(cursors, queued):  # a prefetch that travelled with the COMMIT
            if pending is not None:
                pending.cursor = PgConnection._result(cur, pending.returning)

    def _rollback(self) -> None:
        self._changes, self._deferred = [], []
        self.conn.discard_deferred()
        self.conn.in_transaction = False
        raw = self.conn.raw
        if not raw.closed and raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            raw.execute("ROLLBACK")

    def covers(self, scopes: Iterable[str]) -> bool:
        """Inside a transaction: whether it holds the locks of ``scopes``."""
        return self._depth > 0 and covers(self._held, scopes)

    def savepoint(self, conn: PgConnection, name: str) -> Any:  # type: ignore[override]
        """As :meth:`Store.savepoint`; the mark is how many feed and event rows were queued then, so
        :meth:`rollback_to` also drops the ones queued since (they are sent only with COMMIT)."""
        super().savepoint(conn, name)
        return (len(self._changes), len(self._deferred))

    def rollback_to(self, conn: PgConnection, name: str, mark: Any) -> None:  # type: ignore[override]
        conn.discard_deferred()  # queued since the savepoint (SAVEPOINT sent the earlier ones): undone anyway
        super().rollback_to(conn, name, mark)
        changes, deferred = mark
        del self._changes[changes:]
        del self._deferred[deferred:]

    def bump(self, conn: PgConnection, record_seq: int, op: str = "upsert") -> int:  # type: ignore[override]
        """Queue a change of ``record_seq`` for the index feed; it is written with the COMMIT (see
        :data:`.locks.FLUSH_CHANGES`), so the version row is held only while the commit runs.
        Returns how many changes this transaction has queued (the version is known at commit)."""
        if not self._depth:
            raise RuntimeError("bump() outside a transaction")
        self._changes.append((int(record_seq), op))
        return len(self._changes)

    def append_event(self, conn, *, at: str, kind: str, actor: str, record_id: str | None = None,  # type: ignore[override]
                     entity_id: str | None = None, reason: str | None = None, payload: dict | None = None) -> int:
        """Append one event row. Inside a transaction the row is sent with its COMMIT (one round trip
        fewer per event; nothing in a transaction reads the events it appends), all or nothing with
        the rest; returns 0 then (the seq is assigned at commit)."""
        if not self._depth:
            return super().append_event(conn, at=at, kind=kind, actor=actor, record_id=record_id, entity_id=entity_id,
                                        reason=reason, payload=payload)
        actor, reason, payload = loggable([actor, reason, payload or {}])
        self._deferred.append(("INSERT INTO events (at, kind, actor, record_id, entity_id, reason, payload) "
                               "VALUES (%s,%s,%s,%s,%s,%s,%s)", _params([at, kind, actor, record_id, entity_id, reason,
                                                                         dumps(payload)])))
        return 0

    @contextmanager
    def batched_transaction(self):
        """A write transaction whose statements return nothing anybody reads (a search's log row), sent
        in one round trip: the body only queues them; BEGIN, the shared store lock (an append
        conflicts with no writer; only whole-store transactions keep it out), the statements and
        COMMIT then go to the server together in pipeline mode. All or nothing as any transaction:
        an exception in the body sends nothing, a failing statement rolls the whole batch back.
        Inside another transaction it simply joins it."""
        with self.lock:
            if self._depth:
                with self.transaction(()) as conn:
                    yield conn
                return
            batch = _Batch()
            yield batch
            self._send([("BEGIN", ()), *lock_statements(()), *batch.statements, ("COMMIT", ())])

    def transaction_id(self, conn: PgConnection) -> int:
        """The current transaction's id (64-bit), for the erasure pass's snapshot check."""
        return int(conn.execute_native("SELECT txid_current()").fetchone()[0])

    # -- physical erasure ------------------------------------------------------------------

    def try_truncate_wal(self) -> bool:
        """The SQLite name of "finish pending erasure now"; here it runs the erasure pass once."""
        return self.erase_now().done

    def erase_now(self) -> ErasureReport:
        """Run the erasure pass now (blocking); clears the pending mark when it completes."""
        with self._erase_lock:
            pending = self.get_meta("erase_pending_xid")
            report = erase_pass(self.url, int(pending) if pending else None)
            self.last_erasure = report
            if report.done:
                self._erase_pending = False
                if report.not_erased:  # the pass finished, but copies it cannot reach may keep the text
                    log.warning("erasure pass on %s left copies it cannot erase: %s", self.path, "; ".join(report.not_erased))
                with self.transaction() as conn:
                    if report.not_erased:
                        self.append_event(conn, at=_now(), kind="store.erasure_incomplete", actor="erasure-pass",
                                          payload={"not_erased": report.not_erased, "wal_note": report.wal_note})
                    # only if no forget committed meanwhile (that one needs another pass)
                    conn.execute("DELETE FROM store_meta WHERE key = 'erase_pending_xid' AND value = ?", (pending or "",))
                    if conn.execute("SELECT 1 FROM store_meta WHERE key = 'erase_pending_xid'").fetchone() is None:
                        conn.execute("DELETE FROM store_meta WHERE key = 'erase_pending'")
            return report

    def mark_erase_pending(self, conn: PgConnection) -> None:
        """Inside a forget's transaction: record that an erasure pass is owed (any process may run it)."""
        xid = self.transaction_id(conn)
        for key, value in (("erase_pending_xid", str(xid)), ("erase_pending", "1")):
            conn.execute("INSERT INTO store_meta (key, value) VALUES (?, ?) "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))

    def erase_soon(self, retry_for_s: float = 600.0) -> bool:
        """Start the erasure pass on a background thread (after ``erase_delay_s``); False if deferred."""
        self._erase_pending = True
        with self.lock:
            if self._eraser is not None and self._eraser.is_alive():
                return False  # the running thread loops until nothing is pending
            self._eraser = threading.Thread(target=self._retry_erasure, args=(retry_for_s,), daemon=True,
                                            name="pg-eraser")
            self._eraser.start()
        return False

    def _retry_erasure(self, retry_for_s: float) -> None:
        deadline = time.monotonic() + retry_for_s
        delay = max(self.erase_delay_s, 0.0)
        while not self._closing.is_set() and time.monotonic() < deadline:
            if self._closing.wait(delay):
                return
            try:
                if self.get_meta("erase_pending_xid") is None:
                    self._erase_pending = False
                    return
                self.erase_now()
            except Exception:  # closed underneath us, or the server went away: the worker retries
                return
            delay = 0.5

    @property
    def erase_pending(self) -> bool:
        return self._erase_pending


def _applied_migrations(conn: PgConnection, url: str) -> list[int]:
    """The PostgreSQL migrations recorded in the database, refusing one that holds no store or a newer one."""
    from ...errors import MigrationError, StoreUnusableError

    if conn.execute_native("SELECT to_regclass('schema_migrations') IS NOT NULL AND to_regclass('records') IS NOT NULL"
                           ).fetchone()[0] is not True:
        shown = redact_url(url)
        raise StoreUnusableError(f"the database {shown} holds no agent-memory store (agent-memory init --path URL "
                                 "creates one)", path=shown, problem="not_a_store")
    applied = [r[0] for r in conn.execute_native("SELECT number FROM schema_migrations ORDER BY number").fetchall()]
    newest = max(PG_MIGRATIONS)
    if applied and max(applied) > newest:
        raise MigrationError(f"store schema is at postgres migration {max(applied)}, newer than this code ({newest})",
                             store_version=max(applied), code_version=newest)
    return applied


class _Batch:
    """Collects a batched transaction's statements (SQLite dialect, translated as the connection does)."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, object]] = []

    def execute(self, sql: str, params=()) -> None:
        statement, _ = translate(sql)  # a RETURNING clause the rewrite adds is sent, its row ignored
        self.statements.append((statement, _params(params)))
