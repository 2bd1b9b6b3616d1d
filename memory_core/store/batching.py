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
