"""The one way lists are filtered and paged in SQL: a WHERE builder and a page query.

Used by the admin app's lists (records, entities, logs, sessions, runs), ``extract.runs`` and the
search log. Column names and table expressions are written by the caller in code; only values
travel as parameters.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

from .db import Store


def like_pattern(text: str) -> str:
    """``%text%`` for ``LIKE ? ESCAPE '\\'``, with the text's own ``%``, ``_`` and ``\\`` escaped."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@dataclass
class Where:
    """AND-ed SQL conditions and their parameters, built one filter at a time."""

    clauses: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)

    def add(self, clause: str, *params: Any) -> "Where":
        """Add ``clause`` (with one ``?`` per parameter)."""
        self.clauses.append(clause)
        self.params.extend(params)
        return self

    def equal(self, column: str, value: Any) -> "Where":
        """``column = value``, only when a value is given (None and "" mean no filter)."""
        if value is not None and value != "":
            self.add(f"{column} = ?", value)
        return self

    def sql(self) -> str:
        return " AND ".join(self.clauses) or "1=1"


def count_rows(store: Store, source: str, where: Where) -> int:
    """How many rows of ``source`` match ``where``."""
    return int(store.scalar(f"SELECT COUNT(*) FROM {source} WHERE {where.sql()}", where.params) or 0)


def page_sql(columns: str, source: str, where: Where, order_by: str) -> str:
    """``SELECT columns FROM source WHERE ... ORDER BY ... LIMIT ? OFFSET ?`` (limit and offset follow ``where.params``)."""
    return f"SELECT {columns} FROM {source} WHERE {where.sql()} ORDER BY {order_by} LIMIT ? OFFSET ?"


def select_page(store: Store, columns: str, source: str, where: Where, order_by: str, limit: int, offset: int = 0) -> list[sqlite3.Row]:
    """One page of matching rows in ``order_by`` order."""
    return store.query(page_sql(columns, source, where, order_by), [*where.params, int(limit), int(offset)])
