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


class PgConnection:
    """One psycopg connection speaking the store's SQL (see the module docstring)."""

    backend = "postgresql"

    def __init__(self, url: str) -> None:
        try:
            self.raw = psycopg.connect(url, autocommit=True)
        except psycopg.Error as exc:
            raise as_sqlite_error(exc) from exc
        self.raw.adapters.register_loader("numeric", _NumericLoader)
        self.in_transaction = False
        self.statements = 0  # statements sent (each a round trip to the server), for the benchmarks

    def execute(self, sql: str, params: Any = ()) -> Cursor:
        statement, returning = translate(sql)
        upper = statement.lstrip()[:8].upper()
        self.statements += 1
        try:
            if upper.startswith("BEGIN"):
                self.raw.execute("BEGIN")
                self.in_transaction = True
                return Cursor([], -1, None, None)
            if upper.startswith(("COMMIT", "ROLLBACK", "END")):
                self.in_transaction = False
                self.raw.execute(statement)
                return Cursor([], -1, None, None)
            cur = self.raw.execute(statement, _params(params))
        except psycopg.Error as exc:
            raise as_sqlite_error(exc) from exc
        return self._result(cur, returning)

    def executemany(self, sql: str, seq_of_params) -> Cursor:
        statement, _ = translate(sql)
        self.statements += 1
        try:
            with self.raw.cursor() as cur:
                cur.executemany(statement, [_params(p) for p in seq_of_params])
                return Cursor([], cur.rowcount, None, None)
        except psycopg.Error as exc:
            raise as_sqlite_error(exc) from exc

    def execute_native(self, sql: str, params: Any = ()) -> Cursor:
        """Run PostgreSQL SQL as written (``%s`` placeholders), for the backend's own capabilities."""
        self.statements += 1
        try:
            cur = self.raw.execute(sql, _params(params))
        except psycopg.Error as exc:
            raise as_sqlite_error(exc) from exc
        return self._result(cur, None)

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
