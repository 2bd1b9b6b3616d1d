"""A pool of connections for a PostgreSQL store shared by many sessions at once (``psycopg_pool``).

Without a pool a process has one connection, shared by its threads behind ``store.lock``: a process
serving many sessions (the MCP HTTP server) runs one statement at a time for all of them. With
:meth:`PgStore.use_pool <memory_core.store.pg.store.PgStore.use_pool>`, ``store.lock`` becomes a
:class:`Lease`: the first ``with store.lock`` of a thread takes a connection from the pool for that
thread, nested ones reuse it, and the outermost one's exit gives it back. ``store.conn`` is the
thread's leased connection, so everything the store's modules do under the lock (a search, a
write transaction) runs on one connection, and two threads run on two.

A connection given back is clean: no transaction open (one left open is rolled back, which only an
error path can leave) and no deferred statement queued. The only session settings any connection
carries are the store's own (``SET`` statements the store's code runs, such as pgvector's search
options and a read-only store's ``default_transaction_read_only``): :class:`~memory_core.store.pg.connection.SessionSettings`
records each and applies it to every connection of the pool before its next use, so no connection
differs from another and nothing one request sets reaches the next. A connection the server ended
(``pg_terminate_backend``, a restart) is noticed when it is leased without a round trip (a
connection that is idle has nothing to read; one the server closed has its farewell waiting) and
replaced; one that breaks during a request fails that request and is dropped by the pool.
"""

from __future__ import annotations

import select
import threading
from typing import Any

import psycopg


def idle_and_alive(raw: psycopg.Connection) -> bool:
    """Whether an idle connection is still usable, without a round trip: the server sends nothing to
    an idle session, so anything waiting to be read is its notice of termination (or the socket's end)."""
    if raw.closed or raw.broken:
        return False
    try:
        readable, _, _ = select.select([raw.fileno()], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return False
    return not readable


def _check(raw: psycopg.Connection) -> None:
    """The pool's check on every lease: a dead connection is closed (so the pool drops it and opens
    another, instead of offering it again) and refused."""
    if not idle_and_alive(raw):
        raw.close()
        raise psycopg.OperationalError("the server closed this pooled connection")


class Lease:
    """``store.lock`` of a pooled store: a per-thread, re-entrant lease of one pooled connection."""

    def __init__(self, url: str, min_size: int, max_size: int, wrap, timeout_s: float = 30.0) -> None:
        self._local = threading.local()
        self._wrap = wrap  # raw psycopg connection -> PgConnection of this store
        self._timeout_s = timeout_s
        from psycopg_pool import ConnectionPool  # the postgres extra; only pooled stores need it

        self.pool = ConnectionPool(url, min_size=min_size, max_size=max_size, kwargs={"autocommit": True},
                                   check=_check, open=True, name="agent-memory")

    def current(self) -> Any:
        """The connection this thread holds (None outside ``with store.lock``)."""
        return getattr(self._local, "conn", None)

    def __enter__(self) -> "Lease":
        local = self._local
        depth = getattr(local, "depth", 0)
        if depth == 0:
            raw = self.pool.getconn(timeout=self._timeout_s)
            try:
                local.conn = self._wrap(raw)
            except BaseException:
                self.pool.putconn(raw)
                raise
        local.depth = depth + 1
        return self

    def __exit__(self, *exc) -> None:
        local = self._local
        local.depth -= 1
        if local.depth:
            return
        conn, local.conn = local.conn, None
        self._give_back(conn)

    # ``threading.RLock``'s other spelling, for code that acquires by hand.
    def acquire(self) -> bool:
        self.__enter__()
        return True

    def release(self) -> None:
        self.__exit__(None, None, None)

    def _give_back(self, conn: Any) -> None:
        raw = conn.raw
        conn.discard_deferred()
        conn.in_transaction = False
        try:
            if not raw.closed and raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                raw.rollback()
        except psycopg.Error:
            pass  # a broken connection: the pool drops it
        self.pool.putconn(raw)

    def close(self) -> None:
        self.pool.close()
