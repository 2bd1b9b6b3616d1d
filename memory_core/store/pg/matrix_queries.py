"""Named queries of the in-process matrix of dense search on PostgreSQL (``index/pg_matrix.py``).

The matrix holds every live record's vector and the columns the hard filter masks on; it is loaded
in chunks and kept current from the change feed ``index_changes`` (versions are given at COMMIT, in
commit order, without gaps: :data:`.locks.FLUSH_CHANGES`). Hits it proposes are confirmed by
:func:`confirm_hits`, which runs the search's hard filter as SQL, so admission is always decided here.
"""

from __future__ import annotations

# the columns the matrix keeps of a record (the same names as the SQLite index's rows)
MATRIX_COLUMNS = "r.seq, r.embedding, r.scope_kind, r.scope_id, r.status, r.type, r.event_at"
_LIVE = "r.status != 'deleted' AND r.embedding IS NOT NULL AND r.embedding_vec IS NOT NULL"
_CHUNK = f"SELECT {MATRIX_COLUMNS} FROM records r WHERE r.seq > ? AND {_LIVE} ORDER BY r.seq LIMIT ?"


def records_version(store) -> int:
    """The store's records version (the newest change-feed entry committed)."""
    value = store.scalar("SELECT value FROM store_meta WHERE key = 'records_version'")
    return int(value) if value is not None else 0


def version_and_first_chunk(store, limit: int) -> tuple[int, list]:
    """The records version, then the first :func:`matrix_chunk` (read after it), in one round trip."""
    with store.lock:
        version, rows = store.conn.batch([("SELECT value FROM store_meta WHERE key = 'records_version'", ()),
                                          (_CHUNK, (0, int(limit)))])
    return (int(version[0][0]) if version else 0), rows


def matrix_chunk(store, after_seq: int, limit: int) -> list:
    """Up to ``limit`` live records with a vector and a seq above ``after_seq``, in seq order."""
    return store.query(_CHUNK, (int(after_seq), int(limit)))


_CHANGES = ("WITH c AS (SELECT record_seq, max(version) AS v, bool_or(op = 'reset') AS reset FROM index_changes "
            "WHERE version > ? GROUP BY record_seq) "
            f"SELECT c.record_seq, c.v, c.reset, {MATRIX_COLUMNS} FROM c LEFT JOIN records r ON r.seq = c.record_seq AND {_LIVE}")


def changes_with_rows(store, version: int) -> list:
    """One row per record changed after ``version``, in one statement (one snapshot): ``record_seq``,
    its newest change ``v``, whether a ``reset`` was among the changes, and the record's current
    :data:`MATRIX_COLUMNS` (``seq`` None when the record is gone or has no vector any more)."""
    return store.query(_CHANGES, (int(version),))


def with_changes(store, statement: tuple[str, list], version: int) -> tuple[object, list]:
    """``statement``'s first row and :func:`changes_with_rows` since ``version``, in one round trip
    (pipelined: the hard filter's count and the matrix's catch-up travel together)."""
    with store.lock:
        first, changes = store.conn.batch([statement, (_CHANGES, (int(version),))])
    return first[0], changes


def confirm_hits(store, vector: str, seqs: list[int], where: str, params, columns: str = "") -> list:
    """The listed records that the filter ``where`` (over ``records AS r``) admits and that have a
    vector, each as (``hit_seq``, ``cosine`` from the stored vector, then ``columns`` over ``r``)."""
    if not seqs:
        return []
    extra = f", {columns}" if columns else ""
    return store.query(
        f"SELECT r.seq AS hit_seq, -(r.embedding_vec <#> ?::vector) AS cosine{extra} FROM records r "
        f"WHERE r.seq = ANY(?::bigint[]) AND {where} AND r.embedding_vec IS NOT NULL",
        [vector, [int(s) for s in seqs], *params])
