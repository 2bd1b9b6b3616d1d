"""Statements read together: one round trip on PostgreSQL, one after another on SQLite.

A read whose statements do not depend on each other's results (a record and its entity links, the
grants of the agent asking for it) need not wait for one answer before sending the next question.
On PostgreSQL :meth:`PgConnection.batch <memory_core.store.pg.connection.PgConnection.batch>` sends
them in psycopg's pipeline mode, so they cost one network round trip; SQLite has no network, and
runs them in order. The statements are the same on both, so the answers are too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Statement = tuple[str, Any]  # (SQLite-dialect SQL, its parameters)


def fetch_together(conn, statements: Sequence[Statement]) -> list[list[Any]]:
    """The rows of each statement, in order; on PostgreSQL all of them in one round trip."""
    batch = getattr(conn, "batch", None)
    if batch is not None:
        return batch(list(statements))
    return [conn.execute(sql, params).fetchall() for sql, params in statements]


def batches(conn) -> bool:
    """Whether ``conn`` sends :func:`fetch_together`'s statements in one round trip."""
    return getattr(conn, "batch", None) is not None


class _ReadWhenAsked:
    """A read run when its rows are first asked for (SQLite: no round trip to save)."""

    def __init__(self, conn, sql: str, params: Any) -> None:
        self.conn, self.sql, self.params, self.rows = conn, sql, params, None

    def fetchall(self) -> list[Any]:
        if self.rows is None:
            self.rows = self.conn.execute(self.sql, self.params).fetchall()
        return list(self.rows)


def read_later(conn, sql: str, params: Any = ()):
    """A read whose rows are needed later (``fetchall()``). On PostgreSQL it is queued now and
    travels in front of the connection's next statement (``PgConnection.prefetch``), so it costs no
    round trip of its own; it then runs where it stands, before whatever is sent after it. On
    SQLite it runs when its rows are asked for, as a plain read would have."""
    prefetch = getattr(conn, "prefetch", None)
    if prefetch is not None:
        return prefetch(sql, params)
    return _ReadWhenAsked(conn, sql, params)
