"""An in-process matrix of the store's vectors for dense search on PostgreSQL.

Why: the exact pgvector scan of the rows a wide filter admits is most of a search's time (73 ms at
50K records), while the same inner products in numpy over a matrix the process holds take about
5 ms. So :class:`~memory_core.index.pg_vector.PgVectorIndex` (``postgres.dense_search = "matrix"``,
up to ``postgres.matrix_max_records`` live vectors) keeps every live vector in memory, with the
columns the hard filter masks on, the way the SQLite backend's
:class:`~memory_core.index.vector_index.VectorIndex` does (this class is one, loaded from and kept
current by PostgreSQL), and scores the matrix instead of asking the server to.

Kept current: before each search the change feed since the matrix's version is applied (one
statement that returns the changed records' rows with the feed; nothing is read when the records
version read with the filter's count shows nothing changed). Writes, revisions, forgets, merges
and re-embeds by any process reach the feed; a forgotten record's row is zeroed at once, so its
vector does not stay in this process's memory.

Admission is decided by SQL, never by the matrix. The matrix only proposes: it masks on scope,
status and type (exactly), the event window (widened by a day, so a format difference between the
stored text and the window never loses a row) and the as-of set, ranks those rows by inner product,
and the best of them are confirmed by one query that runs the search's hard filter (with the lapse
of provisional records, which the matrix does not model) and returns the cosines from the stored
vectors. Rows the SQL refuses are dropped and more are taken from the ranking; after a few rounds,
or when the matrix holds fewer candidates than the filter's exact count (it is behind), the search
is left to the exact SQL scan. A row the filter does not admit is never returned, however stale the
matrix; one committed after the catch-up is missed by this search only, as on SQLite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..store.pg import matrix_queries as queries
from .vector_index import VectorIndex

CHUNK_ROWS = 5_000  # rows per statement when loading (bounded transient memory; the feed covers the gaps)
EVENT_SLACK_S = 86_400.0  # the event window is widened by this much in the matrix (SQL decides exactly)
MARGIN = 8  # rows ranked past k that are confirmed too (near-ties at the cut; the first drop-outs)
MAX_ROUNDS = 3  # confirmation rounds (each takes four times more) before the exact SQL scan answers


@dataclass(frozen=True)
class MatrixTerms:
    """What of a hard filter the matrix masks on; it must admit every row the filter's SQL admits."""

    scopes: tuple[str, ...]
    statuses: tuple[str, ...]
    types: tuple[str, ...] | None = None
    event_from: float | None = None  # epoch seconds
    event_to: float | None = None
    as_of_seqs: frozenset[int] | None = None


@dataclass
class Ranked:
    """The matrix's ranking of one search's candidate rows (copied out, so no lock is held after)."""

    seqs: np.ndarray
    scores: np.ndarray
    changes_applied: int

    @property
    def size(self) -> int:
        return int(self.seqs.shape[0])

    def best(self, start: int, stop: int) -> list[int]:
        """The seqs ranked ``start`` .. ``stop`` - 1 (by score, best first)."""
        stop = min(stop, self.size)
        if start >= stop:
            return []
        top = np.argpartition(-self.scores, stop - 1)[:stop] if stop < self.size else np.arange(self.size)
        top = top[np.argsort(-self.scores[top], kind="stable")]
        return [int(s) for s in self.seqs[top[start:stop]]]


class PgMatrix(VectorIndex):
    """Every live vector of a PostgreSQL store and its filter columns, in this process's memory."""

    def __init__(self, store, dim: int) -> None:
        super().__init__(store, dim)
        self.loaded = False

    def rebuild(self) -> int:
        """Load every live vector in chunks, the first one in the round trip that reads the records
        version. Each chunk is read after that version, so it holds every change up to it; a change
        committed while the chunks are read is applied again by the next catch-up (which reads the
        changed records' current rows), so the matrix is left at the version read first."""
        with self.store.lock, self._lock:
            self._reset()
            version, rows = queries.version_and_first_chunk(self.store, CHUNK_ROWS)
            while True:
                for row in rows:
                    self._apply_row(row)
                if len(rows) < CHUNK_ROWS:
                    break
                rows = queries.matrix_chunk(self.store, int(rows[-1]["seq"]), CHUNK_ROWS)
            self.version = version
            self.loaded = True
            return self.backend.count()

    def refresh(self, known_version: int | None = None) -> int:
        """Apply the changes committed since this matrix's version; returns how many records changed.
        ``known_version`` is the store's records version read moments ago (with the filter's count):
        when the matrix is already there, nothing is read."""
        if known_version is not None and known_version <= self.version:
            return 0
        with self.store.lock, self._lock:
            return self._catch_up()

    def apply_read(self, rows, base: int) -> int:
        """Apply change-feed rows read (outside the lock, with another statement) since version
        ``base``; skipped when another thread applied changes meanwhile (its rows may be newer)."""
        if not rows:
            return 0
        with self.store.lock, self._lock:
            return self._apply_feed(rows) if base == self.version else 0

    def _catch_up(self) -> int:
        return self._apply_feed(queries.changes_with_rows(self.store, self.version))

    def _apply_feed(self, rows) -> int:
        if not rows:
            return 0
        if any(row["reset"] for row in rows):  # a restore or re-embed: every vector may have changed
            self.rebuild()
            return len(rows)
        for row in rows:
            if row["seq"] is None:  # forgotten, or its vector removed: the row is zeroed
                self.backend.delete(int(row["record_seq"]))
            else:
                self._apply_row(row)
        self.version = max(self.version, max(int(row["v"]) for row in rows))
        return len(rows)

    def holds(self, seq: int) -> bool:
        """Whether the matrix holds a live vector for ``seq``."""
        with self._lock:
            row = self.backend.row_of(int(seq))
            return row is not None and bool(self.backend.alive()[row])

    def rank(self, query: np.ndarray, terms: MatrixTerms, changes_applied: int = 0) -> Ranked:
        """Every row ``terms`` admits, with its inner product with ``query`` (one product over the matrix)."""
        slack = EVENT_SLACK_S
        with self._lock:
            mask = self.mask(list(terms.scopes), terms.statuses, list(terms.types) if terms.types else None,
                             None if terms.event_from is None else terms.event_from - slack,
                             None if terms.event_to is None else terms.event_to + slack)
            seqs = self.backend.seqs()
            if terms.as_of_seqs is not None:
                held = np.fromiter(terms.as_of_seqs, dtype=np.int64, count=len(terms.as_of_seqs))
                mask &= np.isin(seqs[: mask.shape[0]], held)
            rows = np.flatnonzero(mask)
            matrix = self.backend._matrix
            q = np.asarray(query, dtype=np.float32)
            # einsum, not ``@``: BLAS spreads a matrix-vector product over threads that sleep while the
            # search waits on the server, and waking them cost more than the product itself (50K x 384
            # on 2 busy cores: 7-10 ms with OpenBLAS's threads, 2.4 ms in einsum's single loop)
            if rows.size * 4 >= seqs.shape[0]:  # most rows: one product over the whole matrix is cheaper
                scores = np.einsum("ij,j->i", matrix[: seqs.shape[0]], q)[rows]
            else:
                scores = np.einsum("ij,j->i", matrix[rows], q)
            return Ranked(seqs[rows].copy(), scores, changes_applied)


def confirmed_search(store, ranked: Ranked, vector: str, k: int, allowed, columns: str) -> tuple[list, dict] | None:
    """The top ``k`` of ``ranked`` that the filter's SQL admits, as (rows best first, how), or None
    when the exact SQL scan should answer (the matrix holds fewer candidates than the filter admits,
    or too many of the best were refused)."""
    admitted = allowed.count
    if ranked.size < admitted:
        return None  # the matrix is behind the count (a record it has not seen): SQL answers
    # the first round expects drop-outs in the share the matrix over-admits (lapsed provisionals, the
    # event window's slack)
    want = min(ranked.size, math.ceil((k + MARGIN) * ranked.size / max(admitted, 1)))
    found: dict[int, object] = {}
    taken = 0
    for _ in range(MAX_ROUNDS):
        for row in queries.confirm_hits(store, vector, ranked.best(taken, want), allowed.where, allowed.params, columns):
            found[int(row[0])] = row
        taken = want
        if len(found) >= k or taken >= ranked.size:
            break
        want = min(ranked.size, want * 4)
    else:
        return None
    rows = sorted(found.values(), key=lambda row: (-float(row[1]), int(row[0])))[:k]
    how = {"method": "exact", "index": None, "engine": "matrix", "admitted": admitted, "scored": ranked.size,
           "confirmed": taken, "refused_by_sql": taken - len(found), "changes_applied": ranked.changes_applied,
           "reason": f"exact inner product over the {ranked.size} rows of this process's matrix (kept current from the "
                     f"change feed) that the filter's scopes, statuses and types admit; the best {taken} checked "
                     "against the filter's SQL, which decides admission"}
    return rows, how
