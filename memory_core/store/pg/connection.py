"""A PostgreSQL connection with the small part of ``sqlite3.Connection``'s interface the store uses.

``execute`` / ``executemany`` take SQLite-dialect SQL (rewritten by :mod:`.translate`) and return a
cursor with ``fetchone``, ``fetchall``, iteration, ``rowcount`` and ``lastrowid``; rows are
:class:`Row` (index, column name, ``keys()``, ``dict(row)``), like ``sqlite3.Row``. Python values
are adapted the way SQLite stores them: ``bool`` as 0/1, numpy scalars as Python numbers; and
``numeric`` results (PostgreSQL's ``SUM`` of integers) come back as ``int`` when whole.

The connection runs in autocommit mode: a statement outside :meth:`PgStore.transaction` sees every
commit made before it (by any process), which is what "a writer's change is visible on the next
search" needs. Errors are re-raised as the matching ``sqlite3`` DB-API class (IntegrityError,
OperationalError, ...) with PostgreSQL's message, so code that catches a constraint violation
works on both backends.
"""

from __future__ import annotations

import sqlite3
import threading
from decimal import Decimal
from functools import lru_cache
from typing import Any

import numpy as np
import psycopg
from psycopg.adapt import Loader

from ...errors import InvalidInputError
from .translate import translate


class Row(tuple):
    """A result row addressable by position or column name (as ``sqlite3.Row``)."""

    __slots__ = ()
    _names: dict[str, int] = {}

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            return tuple.__getitem__(self, type(self)._names[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(type(self)._names)


@lru_cache(maxsize=1024)
def _row_class(names: tuple[str, ...]) -> type[Row]:
    return type("Row", (Row,), {"__slots__": (), "_names": {n: i for i, n in enumerate(names)}})


class _NumericLoader(Loader):
    def load(self, data):  # type: ignore[override]
        value = Decimal(bytes(data).decode())
        return int(value) if value == value.to_integral_value() else float(value)


def _adapt(value: Any) -> Any:
    if isinstance(value, str):
        if "\x00" in value:  # PostgreSQL text cannot hold NUL; refuse it as input, before anything is written
            raise InvalidInputError("text contains a NUL character (U+0000), which the PostgreSQL store cannot hold",
                                    field="text")
        return value
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def _params(params: Any) -> Any:
    if params is None:
        return ()
    if isinstance(params, dict):
        return {k: _adapt(v) for k, v in params.items()}
    return [_adapt(v) for v in params]


_ERRORS = (
    (psycopg.errors.IntegrityError, sqlite3.IntegrityError),
    (psycopg.errors.RaiseException, sqlite3.IntegrityError),  # our triggers' refusals (the event log)
    (psycopg.errors.DataError, sqlite3.DataError),
    (psycopg.errors.OperationalError, sqlite3.OperationalError),
    (psycopg.errors.ProgrammingError, sqlite3.OperationalError),
    (psycopg.errors.InternalError, sqlite3.OperationalError),
    (psycopg.errors.NotSupportedError, sqlite3.NotSupportedError),
    (psycopg.Error, sqlite3.DatabaseError),
)


def as_sqlite_error(exc: psycopg.Error) -> sqlite3.Error:
    """The ``sqlite3`` exception class matching a PostgreSQL error, keeping its message."""
    for source, target in _ERRORS:
        if isinstance(exc, source):
            error = target(str(exc).strip())
            error.pgcode = exc.sqlstate  # type: ignore[attr-defined]
            return error
    return sqlite3.DatabaseError(str(exc))


class Pending:
    """The rows of a statement queued by :meth:`PgConnection.prefetch`, filled when it has travelled."""

    __slots__ = ("conn", "statement", "params", "returning", "cursor")

    def __init__(self, conn: "PgConnection", statement: str, params: Any, returning: str | None) -> None:
        self.conn, self.statement, self.params, self.returning = conn, statement, params, returning
        self.cursor: Cursor | None = None

    def result(self) -> "Cursor":
        """The statement's cursor; sends the queue (this statement with it) if it has not travelled
        yet, or the statement alone if its queue was dropped (a savepoint rolled back)."""
        if self.cursor is None:
            if any(item[2] is self for item in self.conn.deferred):
                self.conn._send([])
            else:
                self.cursor = self.conn._send([(self.statement, self.params, self.returning)])[-1]
        assert self.cursor is not None
        return self.cursor

    def fetchall(self) -> list["Row"]:
        return self.result().fetchall()

    def fetchone(self) -> "Row | None":
        return self.result().fetchone()


def fill_pending(queued, results) -> None:
    """Hand each prefetched statement of ``queued`` its cursor from ``results`` (in the same order)."""
    for (_, _, pending), cursor in zip(queued, results):
        if pending is not None:
            pending.cursor = cursor


class Cursor:
    """The result of one statement: rows (if any), ``rowcount`` and ``lastrowid``."""

    def __init__(self, rows: list[Row], rowcount: int, lastrowid: int | None, description) -> None:
        self._rows = rows
        self._at = 0
        self.rowcount = rowcount
        self.lastrowid = lastrowid
        self.description = description

    def fetchone(self) -> Row | None:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchall(self) -> list[Row]:
        rows, self._at = self._rows[self._at:], len(self._rows)
        return rows

    def fetchmany(self, size: int = 1) -> list[Row]:
        rows = self._rows[self._at:self._at + size]
        self._at += len(rows)
        return rows

    def __iter__(self):
        while (row := self.fetchone()) is not None:
            yield row


class SessionSettings:
    """The ``SET`` statements a store's connections must all carry, in the order they were run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.statements: dict[str, str] = {}  # setting name -> its latest SET statement
        self.version = 0

    def record(self, statement: str) -> None:
        """Remember a session-level ``SET name = value`` (not ``SET LOCAL``, which ends with its transaction)."""
        words = statement.split()
        if len(words) < 2 or words[0].upper() != "SET" or words[1].upper() in ("LOCAL", "TRANSACTION", "CONSTRAINTS"):
            return
        name = words[1].split("=")[0].lower()
        with self._lock:
            self.statements[name] = statement
            self.version += 1

    def snapshot(self) -> tuple[int, list[str]]:
        with self._lock:
            return self.version, list(self.statements.values())


class Family:
    """What the connections of one store share: the round-trip count and the session settings."""

    def __init__(self) -> None:
        self.round_trips = 0
        self.settings = SessionSettings()


class PgConnection:
    """One psycopg connection speaking the store's SQL (see the module docstring)."""

    backend = "postgresql"

    def __init__(self, url: str | None = None, *, raw: psycopg.Connection | None = None,
                 family: "Family | None" = None) -> None:
        if raw is None:
            try:
                raw = psycopg.connect(url, autocommit=True)
            except psycopg.Error as exc:
                raise as_sqlite_error(exc) from exc
        self.raw = raw
        self.raw.adapters.register_loader("numeric", _NumericLoader)
        self.family = family if family is not None else Family()
        self.applied = -1  # the family's settings version this connection carries (pooled connections)
        self.in_transaction = False
        # statements queued by defer() and prefetch() (with the Pending a prefetch fills, else None),
        # sent in front of the next statement
        self.deferred: list[tuple[str, Any, Pending | None]] = []

    @property
    def statements(self) -> int:
        """Round trips to the server (a statement, or a pipelined batch), for the benchmarks and the
        round-trip tests; shared by the connections of one store's pool."""
        return self.family.round_trips

    @statements.setter
    def statements(self, value: int) -> None:
        self.family.round_trips = value

    def bring_up_to_date(self) -> None:
        """Run the store's session settings this connection does not carry yet (pooled connections;
        one round trip, only after a setting changed or for a new connection)."""
        version, statements = self.family.settings.snapshot()
        if self.applied == version:
            return
        if statements:
            self._send([(statement, None, None) for statement in statements])
        self.applied = version

    def execute(self, sql: str, params: Any = ()) -> Cursor:
        statement, returning = translate(sql)
        upper = statement.lstrip()[:8].upper()
        if upper.startswith("BEGIN"):
            self.statements += 1
            self._run_plain("BEGIN")
            self.in_transaction = True
            return Cursor([], -1, None, None)
        if upper.startswith(("COMMIT", "ROLLBACK", "END")):
            self.in_transaction = False
            return self._send([(statement, None, None)])[-1]
        return self._send([(statement, _params(params), returning)])[-1]

    def _run_plain(self, statement: str) -> None:
        try:
            self.raw.execute(statement)
        except psycopg.Error as exc:
            raise as_sqlite_error(exc) from exc

    def defer(self, sql: str, params: Any = (), *, native: bool = False) -> None:
        """Inside a transaction: queue a statement whose result nobody reads, to travel with the next
        statement (or the COMMIT) in one pipelined round trip. It still runs before that statement,
        in order; an error it raises is raised by that statement and rolls the transaction back.
        Outside a transaction it runs at once (there is no later statement it could ride with)."""
        statement = sql if native else translate(sql)[0]
        if not self.in_transaction:
            self._send([(statement, _params(params), None)])
            return
        self.deferred.append((statement, _params(params), None))

    def prefetch(self, sql: str, params: Any = (), *, native: bool = False) -> "Pending":
        """Queue a read whose answer is needed later: it travels with the next statement (in front of
        it, in order), and its rows are kept in the returned :class:`Pending`. Asking the Pending for
        them before anything else was sent sends the queue then (still one round trip). The read
        runs where it stands in the queue: it sees the statements queued before it, not those after."""
        statement, returning = (sql, None) if native else translate(sql)
        pending = Pending(self, statement, _params(params), returning)
        self.deferred.append((statement, pending.params, pending))
        return pending

    def batch(self, statements: list[tuple[str, Any]]) -> list[list[Row]]:
        """The rows of each statement (SQLite dialect), sent together in one pipelined round trip.
        For statements whose parameters do not depend on each other's results."""
        translated = [(translate(sql), params) for sql, params in statements]
        cursors = self._send([(statement, _params(params), returning) for (statement, returning), params in translated])
        return [cur.fetchall() for cur in cursors]

    def _send(self, items: list[tuple[str, Any, str | None]]) -> list[Cursor]:
        """Run ``items`` (native SQL, parameters, RETURNING column) after any deferred statements:
        one statement alone is sent as is, several in pipeline mode; either way one round trip."""
        queued, self.deferred = self.deferred, []
        items = [(statement, params, pending.returning if pending else None) for statement, params, pending in queued] + items
        if not items:
            return []
        for statement, _, _ in items:
            if statement[:3].upper() == "SET":  # a session setting: every connection of the store carries it
                self.family.settings.record(statement)
        self.statements += 1
        try:
            if len(items) == 1:
                statement, params, returning = items[0]
                results = [self._result(self.raw.execute(statement, params), returning)]
            else:
                with self.raw.pipeline():
                    cursors = [self.raw.execute(statement, params) for statement, params, _ in items]
                results = [self._result(cur, returning) for cur, (_, _, returning) in zip(cursors, items)]
        except psycopg.Error as exc:
            raise as_sqlite_error(exc) from exc
        fill_pending(queued, results)
        return results[len(queued):]

    def discard_deferred(self) -> None:
        """Drop the queued statements (the transaction they belonged to is rolling back; a dropped
        prefetch runs on its own if its rows are still asked for)."""
        self.deferred = []

    def executemany(self, sql: str, seq_of_params) -> Cursor:
        statement, _ = translate(sql)
        if self.deferred:
            self._send([])
        self.statements += 1
        try:
            with self.raw.cursor() as cur:
                cur.executemany(statement, [_params(p) for p in seq_of_params])
                return Cursor([], cur.rowcount, None, None)
        except psycopg.Error as exc:
            raise as_sqlite_error(exc) from exc

    def execute_native(self, sql: str, params: Any = ()) -> Cursor:
        """Run PostgreSQL SQL as written (``%s`` placeholders), for the backend's own capabilities."""
        return self._send([(sql, _params(params), None)])[-1]

    @staticmethod
    def _result(cur, returning: str | None) -> Cursor:
        rows: list[Row] = []
        if cur.description is not None:
            cls = _row_class(tuple(col.name for col in cur.description))
            rows = [cls(values) for values in cur.fetchall()]
        lastrowid = None
        if returning is not None:
            lastrowid = rows[0][0] if rows else None
            rows = []
        return Cursor(rows, cur.rowcount, lastrowid, cur.description)

    def close(self) -> None:
        self.raw.close()
