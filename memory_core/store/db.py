"""The SQLite connection: one file, WAL mode, foreign keys on, one writer at a time.

A :class:`Store` owns one connection shared by the threads of a process (Streamlit runs pages on
threads) behind a re-entrant lock. Writes go through :meth:`Store.transaction`, which takes
SQLite's write lock up front (``BEGIN IMMEDIATE``) so a multi-statement write is all or nothing.
"""

from __future__ import annotations

import json
import zlib
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .migrations import migrate


class Store:
    """A migrated SQLite store."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.lock = threading.RLock()
        self._depth = 0

    @classmethod
    def open(cls, path: str | Path, now: str) -> "Store":
        """Open (creating if needed) and migrate the store at ``path``."""
        path = Path(path)
        if str(path) != ":memory:":
            path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30.0)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")
        # Freed pages are zeroed so forgotten content does not linger in the file.
        conn.execute("PRAGMA secure_delete=ON")
        conn.execute("PRAGMA busy_timeout=30000")
        migrate(conn, now)
        return cls(conn, path)

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; nested use joins the outer one."""
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            self.conn.execute("BEGIN IMMEDIATE")
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
        """Append one row to the event log (inside the caller's transaction)."""
        cur = conn.execute(
            "INSERT INTO events (at, kind, actor, record_id, entity_id, reason, payload) VALUES (?,?,?,?,?,?,?)",
            (at, kind, actor, record_id, entity_id, reason, dumps(payload or {})),
        )
        return int(cur.lastrowid)


def dumps(value: Any) -> str:
    """Compact JSON for stored columns, keeping non-ASCII text as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


COMPRESSED_JSON = b"Z1"  # prefix of a zlib-compressed JSON column (search_log.trace)


def dumps_compressed(value: Any) -> bytes:
    """Compact JSON, zlib-compressed, for large repetitive columns; :func:`loads` reads it back."""
    return COMPRESSED_JSON + zlib.compress(dumps(value).encode(), 1)


def loads(value: str | bytes | None, default: Any = None) -> Any:
    """Decode a JSON column (plain text, or bytes written by :func:`dumps_compressed`)."""
    if value is None or value == "" or value == b"":
        return default
    if isinstance(value, bytes):
        if value.startswith(COMPRESSED_JSON):
            value = zlib.decompress(value[len(COMPRESSED_JSON):])
        return json.loads(value)
    return json.loads(value)
