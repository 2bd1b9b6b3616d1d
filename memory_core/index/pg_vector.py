"""Dense search inside PostgreSQL with pgvector: the vector index of the PostgreSQL backend.

It offers the :class:`~memory_core.index.vector_index.VectorIndex` methods the pipeline and the
write path call (``mask``, ``search``, ``search_explained``, ``similarity``, ``vectors``,
``count``, ``refresh``, ``rebuild``). Admission is always SQL: every dense query's WHERE clause is
the search's hard filter over ``records`` (readable scopes, lifecycle, type, event window, lapsed
provisionals), so no record outside it is ever returned, and a write committed by any process is
seen by the next search.

The "mask" handed between the hard-filter stage and the generators is a :class:`SqlFilter`: the
filter's SQL predicate and the exact number of rows it admits (read from ``record_counts``, a
table of rows per scope, status and type kept by triggers), never the list of admitted rows, so
the cost of a search does not grow with the principal's readable set. The dense query and the
lexical postings query both run that predicate.

In-process or in the database: with ``postgres.dense_search = "matrix"`` (the default) and at most
``postgres.matrix_max_records`` live vectors, a search outside a write transaction is scored in
numpy over this process's matrix of the store's vectors, kept current from the change feed, and
its best rows are confirmed by the filter's SQL (:mod:`.pg_matrix`): exact, and several times
faster than the scan below. Otherwise, or when the matrix cannot answer, the query below runs.

Exact or approximate: below ``postgres.ann_min_records`` live vectors, or when the filter admits at
most ``postgres.exact_max_rows`` rows, the query orders by the plain ``embedding_vec <#> query``
expression, which no index serves, so PostgreSQL scans the admitted rows exactly. Otherwise an IVF
index (pgvector ``ivfflat``, inner product, ``lists`` = the square root of the live vectors, built in
the background with ``CREATE INDEX CONCURRENTLY`` and rebuilt when the store has grown fourfold)
serves the query: the ``postgres.ivf_probes`` lists nearest the query are scanned exactly and the
filter is checked on every row they hold (``ivfflat.iterative_scan = relaxed_order`` scans more lists
when a selective filter leaves fewer than ``k``). IVF by default, not HNSW: on the 1M benchmark
store HNSW missed a third of the exact top 10 even without a filter (benchmarks/README.md), though
``postgres.ann_index = "hnsw"`` builds pgvector's HNSW graph instead (``postgres.hnsw_ef_search``,
iterative scans under a filter) for stores whose vectors suit it. Returned cosines
are always computed from the stored vectors, and the filter is in the WHERE clause whatever the
path, so no row outside it is ever returned.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from datetime import datetime, timezone

import numpy as np

from ..clock import epoch, format_ts
from ..store.pg import matrix_queries
from ..store.pg import vectors as queries
from ..store.pg.vectors import ANN_INDEX
from ..store.records import blob_to_vector, vector_literal
from .pg_matrix import MatrixTerms, PgMatrix, confirmed_search

log = logging.getLogger(__name__)

ANN_KINDS = ("ivfflat", "hnsw")
DENSE_SEARCHES = ("matrix", "sql")
# An HNSW build is fastest when the graph fits in maintenance_work_mem (about 1.5 GB at 1M x 384
# dimensions); with less it goes on, slower, writing the graph as it grows.
HNSW_BUILD_MEMORY_MB = 2048


class SqlFilter:
    """The hard filter of one search on PostgreSQL: its SQL predicate and the exact number of rows it
    admits (live vectors only), without the rows themselves.

    It stands where the SQLite backend hands a boolean mask over the index's rows: ``sum()`` is the
    admitted count, the dense query and the lexical postings query run ``where``. ``without`` gives
    the rows a wider filter adds to a narrower one (the lifecycle probe's "what did lifecycle
    alone exclude"), again as SQL.
    """

    def __init__(self, where: str, params, count: int, key: tuple | None = None, lapsed: int | None = None,
                 records_version: int | None = None, terms: MatrixTerms | None = None, changes_applied: int = 0) -> None:
        self.where = where
        self.changes_applied = changes_applied  # change-feed entries the matrix took in with the count
        # what the in-process matrix pre-masks on (None: the matrix is not used for this filter)
        self.terms = terms
        # the store's records version read with the count (None: not read), for the lexical cache key
        self.records_version = records_version
        self.lapsed = lapsed  # provisional records past expiry the filter excluded (None: not counted)
        self.params = tuple(params)
        self.count = int(count)
        self.key = key if key is not None else (where, self.params)

    def sum(self) -> int:
        return self.count

    def __len__(self) -> int:
        return self.count

    def without(self, narrower: "SqlFilter") -> "SqlFilter":
        """The rows this filter admits and ``narrower`` does not (``narrower`` must be contained in this one)."""
        where = f"({self.where}) AND NOT COALESCE(({narrower.where}), false)"
        return SqlFilter(where, (*self.params, *narrower.params), max(self.count - narrower.count, 0),
                         ("without", self.key, narrower.key))

    def __repr__(self) -> str:
        return f"SqlFilter({self.count} rows: {self.where})"


class PgVectorIndex:
    """pgvector-backed dense search for a :class:`~memory_core.store.pg.store.PgStore`."""

    def __init__(self, store, dim: int, ann_min_records: int = 100_000, probes: int = 32,
                 exact_max_rows: int = 10_000, *, kind: str = "ivfflat", ef_search: int = 100,
                 dense_search: str = "matrix", matrix_max_records: int = 200_000) -> None:
        if kind not in ANN_KINDS:
            raise ValueError(f"unknown approximate index {kind!r} (one of {', '.join(ANN_KINDS)})")
        if dense_search not in DENSE_SEARCHES:
            raise ValueError(f"unknown dense search {dense_search!r} (one of {', '.join(DENSE_SEARCHES)})")
        self.dense_search = dense_search
        self.matrix_max_records = matrix_max_records
        self.matrix: PgMatrix | None = None  # loaded by the first search that may use it
        self._matrix_lock = threading.Lock()
        self._matrix_checked_at: float | None = None  # when the store was last found too large for it
        self.store = store
        self.kind = kind
        self.ef_search = ef_search
        self.dim = dim
        self.ann_min_records = ann_min_records
        self.probes = probes
        self.exact_max_rows = exact_max_rows
        self.version = 0
        self._lists: int | None = None
        self._checked_at = 0.0
        self._building: threading.Thread | None = None
        queries.set_search_options(store, probes, ef_search)

    # -- the filter as SQL ---------------------------------------------------------------------

    def filter_mask(self, flt) -> SqlFilter:
        """The hard filter of a search as a :class:`SqlFilter` (its SQL and the exact count it admits)."""
        where, params = flt.sql("r")
        if not flt.scopes or not flt.statuses:
            return SqlFilter("1 = 0", [], 0)
        terms = MatrixTerms(tuple(flt.scopes), tuple(flt.statuses), tuple(flt.types) if flt.types else None,
                            epoch(flt.event_from), epoch(flt.event_to), getattr(flt, "as_of_seqs", None))
        if flt.event_from is not None or flt.event_to is not None or getattr(flt, "as_of", None):
            count = self._count_rows(where, params)  # record_counts has no time column
        else:
            lapsed = "provisional" in flt.statuses and not flt.include_lapsed
            count, lapsed_count, version, applied = self._count_from_table(flt.scopes, flt.statuses, flt.types,
                                                                           flt.now if lapsed else None)
            return SqlFilter(where, params, count, lapsed=lapsed_count, records_version=version, terms=terms,
                             changes_applied=applied)
        return SqlFilter(where, params, count, terms=terms)

    def mask(self, scopes, statuses, types=None, event_from: float | None = None, event_to: float | None = None) -> SqlFilter:
        """The write path's filter (scope, status, type, event window in epoch seconds) as a :class:`SqlFilter`."""
        if not scopes or not statuses:
            return SqlFilter("1 = 0", [], 0)
        clauses, params = queries.filter_clauses(scopes, statuses, types)
        for op, value in ((">=", event_from), ("<=", event_to)):
            if value is not None:
                clauses.append(f"r.event_at {op} ?")
                params.append(format_ts(datetime.fromtimestamp(value, timezone.utc)))
        where = " AND ".join(clauses)
        terms = MatrixTerms(tuple(scopes), tuple(statuses), tuple(types) if types else None, event_from, event_to)
        if event_from is not None or event_to is not None:
            return SqlFilter(where, params, self._count_rows(where, params), terms=terms)
        count, _, version, applied = self._count_from_table(scopes, statuses, types, None)
        return SqlFilter(where, params, count, records_version=version, terms=terms, changes_applied=applied)

    def _count_rows(self, where: str, params) -> int:
        """The admitted rows counted one by one (an event-time window: record_counts has no time column)."""
        return queries.count_admitted(self.store, where, params)

    def _count_from_table(self, scopes, statuses, types, lapsed_at: str | None) -> tuple[int, int, int, int]:
        """The admitted rows from ``record_counts``, less the lapsed provisionals (one round trip;
        :func:`memory_core.store.pg.vectors.count_from_table`), and the change-feed entries applied to
        the matrix: with one loaded, its catch-up travels in the same round trip (the search adds none)."""
        matrix = self.matrix
        if matrix is None or self.dense_search != "matrix" or self.store.covers(()):
            return (*queries.count_from_table(self.store, scopes, statuses, types, lapsed_at), 0)
        base = matrix.version
        row, changes = matrix_queries.with_changes(self.store, queries.count_statement(scopes, statuses, types, lapsed_at), base)
        return (*queries.counted(row), matrix.apply_read(changes, base))

    # -- searching -----------------------------------------------------------------------------

    def search(self, query: np.ndarray, k: int, allowed: SqlFilter | None = None) -> list[tuple[int, float]]:
        return self.search_explained(query, k, allowed)[0]

    def search_explained(self, query: np.ndarray, k: int, allowed: SqlFilter | None = None) -> tuple[list[tuple[int, float]], dict]:
        hits, how, _ = self.search_with_rows(query, k, allowed)
        return hits, how

    def search_with_rows(self, query: np.ndarray, k: int, allowed: SqlFilter | None = None,
                         columns: str = "") -> tuple[list[tuple[int, float]], dict, list]:
        """Top ``k`` (seq, cosine) under the filter's SQL predicate, which path answered, and the hits'
        rows with ``columns``.

        Exact (a scan of the admitted rows, ordered by an expression no index serves) when there is
        no valid approximate index or the filter admits at most ``exact_max_rows`` rows; otherwise
        the approximate index, with the filter in the same WHERE clause (the executor checks every
        row the index proposes, so no row outside the filter is ever returned, whatever the index).
        """
        if allowed is None or k <= 0 or not isinstance(allowed, SqlFilter) or allowed.count <= 0:
            return [], {"method": "exact", "reason": "no admitted rows", "engine": "pgvector", "admitted": 0}, []
        vec = vector_literal(query)
        admitted = allowed.count
        matrix = self._usable_matrix(allowed)
        if matrix is not None:
            applied = matrix.refresh(allowed.records_version) + allowed.changes_applied
            answered = confirmed_search(self.store, matrix.rank(query, allowed.terms, applied), vec, k, allowed, columns)
            if answered is not None:
                rows, how = answered
                return [(int(row[0]), float(row[1])) for row in rows], how, rows
        lists = self.ann_lists()
        approximate_dim = None
        if not lists:
            how = {"method": "exact", "index": None, "engine": "pgvector", "admitted": admitted,
                   "reason": f"no approximate index (built from {self.ann_min_records} vectors): exact scan of the admitted rows"}
        elif admitted <= self.exact_max_rows:
            how = {"method": "exact", "index": None, "engine": "pgvector", "admitted": admitted,
                   "reason": f"the filter admits {admitted} rows (at most {self.exact_max_rows}): exact scan of them"}
        else:
            approximate_dim = self.dim
            # the number of lists is left out: it follows the size of the whole store, which a
            # principal must not learn from its own searches
            if self.kind == "hnsw":
                how = {"method": "approximate", "index": ANN_INDEX, "engine": "pgvector (hnsw)", "admitted": admitted,
                       "ef_search": self.ef_search, "iterative_scan": "relaxed_order",
                       "reason": f"HNSW graph over the whole store: {self.ef_search} candidates kept while walking it, the "
                                 f"filter checked on every row reached, more walked until enough pass ({admitted} rows admitted)"}
            else:
                how = {"method": "approximate", "index": ANN_INDEX, "engine": "pgvector (ivfflat)", "admitted": admitted,
                       "probes": self.probes, "iterative_scan": "relaxed_order",
                       "reason": f"IVF index over the whole store: the {self.probes} lists nearest the query are scanned "
                                 f"exactly, the filter checked on every row they hold ({admitted} rows admitted)"}
        # ``columns`` (the caller's record columns over ``r``) come back in the same statement: the
        # dense generator then needs no second round trip for the hits' rows
        rows = queries.nearest(self.store, vec, k, allowed.where, allowed.params, approximate_dim=approximate_dim, columns=columns)
        return [(int(row[0]), float(row[1])) for row in rows], how, rows

    def similarity(self, query: np.ndarray, seqs: list[int]) -> dict[int, float]:
        """Cosine of ``query`` with each listed record's stored vector (records without one are left out)."""
        return queries.cosines(self.store, vector_literal(query), seqs)

    def vectors(self, seqs: list[int]) -> np.ndarray:
        """The stored unit vectors of ``seqs`` as rows (a zero row for a seq without a live vector)."""
        out = np.zeros((len(seqs), self.dim), dtype=np.float32)
        if not seqs:
            return out
        found = {seq: blob_to_vector(blob) for seq, blob in queries.embedding_blobs(self.store, seqs).items()}
        for i, seq in enumerate(seqs):
            vector = found.get(int(seq))
            if vector is not None and vector.shape[0] == self.dim:
                out[i] = vector
        return out

    def count(self) -> int:
        """Live vectors (from ``record_counts``: one small aggregate, not a count of the rows)."""
        return queries.live_vector_count(self.store)

    # -- the in-process matrix (index/pg_matrix.py) ---------------------------------------------

    def _usable_matrix(self, allowed: SqlFilter) -> PgMatrix | None:
        """The matrix, loaded if need be, when this search may use it: ``dense_search`` is matrix, the
        filter says what the matrix masks on, this thread is not inside a write transaction (whose
        own uncommitted rows, and the rows committed before its locks were taken, only SQL sees),
        and the store holds at most ``matrix_max_records`` live vectors (checked again a minute
        after it was found larger)."""
        if self.dense_search != "matrix" or allowed.terms is None or self.store.covers(()):
            return None
        with self._matrix_lock:
            matrix = self.matrix
            if matrix is not None and matrix.count() > self.matrix_max_records:
                self.matrix, matrix, self._matrix_checked_at = None, None, time.monotonic()
            if matrix is None:
                if self._matrix_checked_at is not None and time.monotonic() - self._matrix_checked_at < 60:
                    return None
                if self.count() > self.matrix_max_records:
                    self._matrix_checked_at = time.monotonic()
                    return None
                matrix = PgMatrix(self.store, self.dim)
                matrix.rebuild()
                self.matrix, self._matrix_checked_at = matrix, None
            return matrix

    # -- keeping up ----------------------------------------------------------------------------

    def refresh(self) -> int:
        """Nothing to apply (the vectors are in the database); starts the IVF build (or rebuild) when due."""
        if time.monotonic() - self._checked_at > 60:
            self._maybe_build_ann()
        return 0

    def rebuild(self) -> int:
        """Drops the in-process matrix (the next search loads it again) and checks whether the IVF
        index is due. Returns the number of live vectors."""
        with self._matrix_lock:
            self.matrix = None
        self._lists = None
        self._maybe_build_ann()
        return self.count()

    def has_ann(self) -> bool:
        """Whether a valid approximate (IVF) index exists."""
        return self.ann_lists() > 0

    def ann_lists(self) -> int:
        """The valid approximate index of the configured kind: an IVF index's number of lists, 1 for an
        HNSW graph, 0 when there is none (an index of the other kind counts as none: it is replaced).
        Checked again at most once a minute."""
        if self._lists is None or time.monotonic() - self._checked_at > 60:
            self._checked_at = time.monotonic()
            row = queries.ann_index_state(self.store)
            if row is None or row[1] != self.kind:
                self._lists = 0
            elif self.kind == "hnsw":
                self._lists = 1
            else:
                options = dict(o.split("=", 1) for o in (row[0] or []))
                self._lists = int(options.get("lists", 100))
        return self._lists

    def _maybe_build_ann(self, wait: bool = False) -> None:
        if self._building is not None and self._building.is_alive():
            if not wait:
                return
            # a build already under way (started at open, say) is the one to wait for; then look
            # again, since it may have been of a kind or size that is no longer wanted
            self._building.join()
        lists = self.ann_lists()
        self._checked_at = time.monotonic()
        live = self.count()
        # built once the store reaches ann_min_records; rebuilt when it has grown to four times the
        # size its lists were made for (the lists' centres then describe a quarter of the vectors)
        # (an HNSW graph takes every insert as it comes: it is never rebuilt for growth)
        if live < self.ann_min_records or (lists and (self.kind == "hnsw" or live <= 4 * lists * lists)):
            return
        self._building = threading.Thread(target=self._build_logged, args=(ivf_lists(live),), daemon=True, name="pg-ivf-build")
        self._building.start()
        if wait:
            self._building.join()

    def _build_logged(self, lists: int) -> None:
        try:
            self.build_ann(lists)
        except Exception:  # noqa: BLE001 - a background build: searches stay exact; retried a minute later
            log.warning("building the %s index failed; dense search stays exact", self.kind, exc_info=True)

    def build_ann(self, lists: int) -> None:
        """Create (or replace) the approximate index of the configured kind (``lists`` is used by IVF)
        without blocking writers: built concurrently under a new name, then swapped in (its own
        connection: CONCURRENTLY needs autocommit)."""
        # pgvector refuses to build when its k-means sample does not fit maintenance_work_mem
        # (64 MB by default; 1,000 lists of 384 dimensions need about 80 MB)
        memory = ivf_build_memory_mb(lists, self.dim) if self.kind == "ivfflat" else HNSW_BUILD_MEMORY_MB
        queries.build_ann_index(self.store.url, self.kind, self.dim, lists, memory)
        self._lists = None


def ivf_lists(live: int) -> int:
    """IVF lists for ``live`` vectors: the square root (1,000 at 1M), as the SQLite store's faiss index."""
    return max(1, min(int(math.sqrt(max(live, 1))), 32_768))


def ivf_build_memory_mb(lists: int, dim: int) -> int:
    """``maintenance_work_mem`` for building an IVF index: pgvector samples 50 vectors per list (at least
    10,000) and keeps lists x lists distances for k-means; twice that, and never less than 128 MB."""
    samples = max(50 * lists, 10_000) * (dim * 4 + 16)
    kmeans = lists * lists * 4 + 8 * lists * (dim * 4 + 16)
    return max(128, int(2 * (samples + kmeans) / 2**20) + 1)
