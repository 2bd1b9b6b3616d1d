"""Named queries of the in-process vector index over ``records`` and the change feed ``index_changes``.

The SQLite backend's :class:`~memory_core.index.vector_index.VectorIndex`, its approximate-index file
(``index/ann_file.py``), its vector file (``index/warm_start.py``) and the re-embedding migration
(``index/reembed.py``) read and write through these, so ``index/`` holds no SQL. (The PostgreSQL
backend's dense search has its own, in ``store/pg/vectors.py``.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from .db import Store
from .urls import sqlite_uri

# The columns the index keeps of a record: its vector and what the hard filter masks on.
INDEX_COLUMNS = "seq, embedding, scope_kind, scope_id, status, type, event_at"


def _marks(values) -> str:
    return ",".join("?" * len(values))


def live_embeddings(store: Store) -> tuple[int, list]:
    """Every live record's index columns, in seq order, with the records version they are at (read in
    one snapshot: a writer committing meanwhile is wholly before or after)."""
    with store.lock:
        conn = store.conn
        conn.execute("BEGIN")
        try:
            version = store.records_version()
            rows = conn.execute(f"SELECT {INDEX_COLUMNS} FROM records "
                                "WHERE status != 'deleted' AND embedding IS NOT NULL ORDER BY seq").fetchall()
        finally:
            conn.execute("COMMIT")
    return version, rows


def index_rows(store: Store, seqs: list[int]) -> list:
    """The index columns of the listed records (whatever their status; a missing seq has no row)."""
    return store.query(f"SELECT {INDEX_COLUMNS} FROM records WHERE seq IN ({_marks(seqs)})", list(seqs))


def changes_since(store: Store, version: int) -> list:
    """One row per record changed after ``version``: ``record_seq``, its newest version ``v``, and
    whether it was ``reset`` or ``deleted`` since."""
    return store.query(
        "SELECT record_seq, MAX(version) AS v, MAX(op = 'reset') AS reset, MAX(op = 'delete') AS deleted "
        "FROM index_changes WHERE version > ? GROUP BY record_seq", (version,))


def feed_since(store: Store, version: int) -> tuple[int, int | None, list]:
    """The store's records version, the oldest version the feed still holds, and one row per record
    changed after ``version`` (``record_seq``, ``deleted``, ``reset``), read together under the lock."""
    with store.lock:
        current = store.records_version()
        oldest = store.conn.execute("SELECT MIN(version) FROM index_changes").fetchone()[0]
        rows = store.conn.execute(
            "SELECT record_seq, MAX(op = 'delete') AS deleted, MAX(op = 'reset') AS reset FROM index_changes "
            "WHERE version > ? GROUP BY record_seq", (version,)).fetchall()
    return current, oldest, rows


def feed_anchor(store: Store, version: int) -> tuple[int | None, str | None]:
    """(seq, id) of the record the feed entry at ``version`` names (id None once it is gone; both
    None when the feed has no entry there)."""
    found = store.query_one(
        "SELECT i.record_seq AS seq, r.id AS id FROM index_changes i LEFT JOIN records r ON r.seq = i.record_seq "
        "WHERE i.version = ?", (version,))
    return (found["seq"], found["id"]) if found is not None else (None, None)


def record_id_at(store: Store, seq: int) -> str | None:
    """The id of the record with ``seq``, or None."""
    found = store.query_one("SELECT id FROM records WHERE seq = ?", (seq,))
    return found["id"] if found is not None else None


def newest_record(store: Store) -> tuple[int | None, str | None]:
    """(seq, id) of the newest record, or (None, None) in an empty store."""
    last = store.query_one("SELECT seq, id FROM records ORDER BY seq DESC LIMIT 1")
    return (last["seq"], last["id"]) if last is not None else (None, None)


def count_newer(store: Store, seq: int) -> int:
    """Records with a seq above ``seq``."""
    return int(store.scalar("SELECT COUNT(*) FROM records WHERE seq > ?", (seq,)) or 0)


def sample_rows(store: Store, seqs: list[int]) -> dict[int, Any]:
    """The vector and mask columns of the listed records, by seq."""
    return {r["seq"]: r for r in store.query(
        f"SELECT seq, embedding, scope_kind, scope_id, status, type FROM records WHERE seq IN ({_marks(seqs)})", list(seqs))}


def feed_flags_in_file(store_path: Path, version: int) -> tuple[bool, bool]:
    """Whether a forget (delete) and whether a reset was committed after ``version``, read through a
    read-only connection of its own to the file at ``store_path`` (the store's own may be closed).
    Raises :class:`sqlite3.Error` when the file cannot be read."""
    conn = sqlite3.connect(sqlite_uri(store_path, mode="ro"), uri=True, timeout=30)
    try:
        row = conn.execute("SELECT MAX(op = 'delete'), MAX(op = 'reset') FROM index_changes WHERE version > ?", (version,)).fetchone()
    finally:
        conn.close()
    return (bool(row and row[0]), bool(row and row[1]))


def live_contents(store: Store) -> list:
    """``seq`` and ``content`` of every non-deleted record, in seq order (what re-embedding reads)."""
    return store.query("SELECT seq, content FROM records WHERE status != 'deleted' ORDER BY seq")


def set_embedding(store: Store, conn, seq: int, blob: bytes, model: str, version: str, dim: int,
                  pg_vector: str | None = None) -> None:
    """Store a record's new embedding and the model that made it (inside the caller's transaction);
    on PostgreSQL also the pgvector copy dense search reads (``pg_vector``, a vector literal)."""
    conn.execute("UPDATE records SET embedding = ?, embed_model = ?, embed_version = ?, embed_dim = ? WHERE seq = ?",
                 (blob, model, version, dim, seq))
    if pg_vector is not None:
        conn.execute("UPDATE records SET embedding_vec = ?::vector WHERE seq = ?", (pg_vector, seq))
