"""Dense search inside PostgreSQL with pgvector: the vector index of the PostgreSQL backend.

It offers the :class:`~memory_core.index.vector_index.VectorIndex` methods the pipeline and the
write path call (``mask``, ``search``, ``search_explained``, ``similarity``, ``vectors``,
``count``, ``refresh``, ``rebuild``) but keeps nothing in memory: every search is one SQL query
over ``records.embedding_vec`` whose WHERE clause is the search's hard filter (readable scopes,
lifecycle, type, event window, lapsed provisionals), so a record the principal cannot read is
never even scored, and a write committed by any process is seen by the next search.

The "mask" handed between the hard-filter stage and the generators is an :class:`SqlMask`: the
boolean array the rest of the pipeline expects (all True, one entry per admitted record, with
those records' ``seqs`` attached for the lexical generator's readable set) carrying the SQL
predicate it came from; the dense query runs that predicate, not the list.

Exact or approximate: below ``postgres.hnsw_min_records`` live vectors the query orders by the
plain ``embedding_vec <#> query`` expression, which no index serves, so PostgreSQL scans the
admitted rows exactly. From that size on an HNSW index (inner product, built once in the
background with ``CREATE INDEX CONCURRENTLY``) exists on ``(embedding_vec::vector(dim))`` and the
query orders by that expression, with pgvector's iterative scan (``hnsw.iterative_scan =
relaxed_order``) so a selective filter still fills ``k``; the planner may still choose the exact
path for a small admitted set. Returned cosines are always computed from the stored vectors.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone

import numpy as np

from ..clock import format_ts
from ..store.records import blob_to_vector, vector_literal

HNSW_INDEX = "records_embedding_hnsw"


class SqlMask(np.ndarray):
    """An all-True boolean array over the admitted seqs, carrying the SQL that admitted them."""

    seqs: np.ndarray | None = None
    where: str = "1 = 0"
    params: tuple = ()

    def __array_finalize__(self, obj) -> None:
        if obj is None:
            return
        self.seqs = getattr(obj, "seqs", None)
        self.where = getattr(obj, "where", "1 = 0")
        self.params = getattr(obj, "params", ())


def _make_mask(seqs: np.ndarray, where: str, params: list) -> SqlMask:
    mask = np.ones(seqs.shape[0], dtype=bool).view(SqlMask)
    mask.seqs, mask.where, mask.params = seqs, where, tuple(params)
    return mask


class PgVectorIndex:
    """pgvector-backed dense search for a :class:`~memory_core.store.pg.store.PgStore`."""

    def __init__(self, store, dim: int, hnsw_min_records: int = 100_000, ef_search: int = 100) -> None:
        self.store = store
        self.dim = dim
        self.hnsw_min_records = hnsw_min_records
        self.ef_search = ef_search
        self.version = 0
        self._hnsw: bool | None = None
        self._checked_at = 0.0
        self._building: threading.Thread | None = None
        with store.lock:
            store.conn.execute_native(f"SET hnsw.ef_search = {int(ef_search)}")
            store.conn.execute_native("SET hnsw.iterative_scan = relaxed_order")

    # -- the filter as SQL ---------------------------------------------------------------------

    def filter_mask(self, flt) -> SqlMask:
        """The hard filter of a search as an :class:`SqlMask` (the seqs it admits, and its SQL)."""
        where, params = flt.sql("r")
        return self._select(where, params)

    def mask(self, scopes, statuses, types=None, event_from: float | None = None, event_to: float | None = None) -> SqlMask:
        """The write path's filter (scope, status, type, event window in epoch seconds) as an :class:`SqlMask`."""
        if not scopes or not statuses:
            return _make_mask(np.zeros(0, dtype=np.int64), "1 = 0", [])
        pairs = [scope.split(":", 1) for scope in scopes]
        clauses = [f"(r.scope_kind, r.scope_id) IN (VALUES {', '.join('(?, ?)' for _ in pairs)})",
                   f"r.status IN ({', '.join('?' * len(statuses))})"]
        params: list = [part for pair in pairs for part in pair] + list(statuses)
        if types:
            clauses.append(f"r.type IN ({', '.join('?' * len(types))})")
            params.extend(types)
        for op, value in ((">=", event_from), ("<=", event_to)):
            if value is not None:
                clauses.append(f"r.event_at {op} ?")
                params.append(format_ts(datetime.fromtimestamp(value, timezone.utc)))
        # The write path only searches under this mask: the admitted seqs are not listed (a token
        # one-entry mask carries the SQL), which keeps a write from reading a whole scope's seqs.
        mask = np.ones(1, dtype=bool).view(SqlMask)
        mask.seqs, mask.where, mask.params = None, " AND ".join(clauses), tuple(params)
        return mask

    def _select(self, where: str, params: list) -> SqlMask:
        # one row holding the list: tens of thousands of seqs cost one string, not a Python row each
        row = self.store.query_one(f"SELECT string_agg(r.seq::text, ',' ORDER BY r.seq) FROM records r "
                                   f"WHERE {where} AND r.embedding_vec IS NOT NULL", params)
        seqs = np.fromstring(row[0], dtype=np.int64, sep=",") if row and row[0] else np.zeros(0, dtype=np.int64)
        return _make_mask(seqs, where, params)

    # -- searching -----------------------------------------------------------------------------

    def search(self, query: np.ndarray, k: int, allowed: SqlMask | None = None) -> list[tuple[int, float]]:
        return self.search_explained(query, k, allowed)[0]

    def search_explained(self, query: np.ndarray, k: int, allowed: SqlMask | None = None) -> tuple[list[tuple[int, float]], dict]:
        """Top ``k`` (seq, cosine) under the mask's SQL predicate, and how the query was planned."""
        if allowed is None or k <= 0 or not isinstance(allowed, SqlMask) or (allowed.seqs is not None and not allowed.seqs.size):
            return [], {"method": "exact", "reason": "no admitted rows", "engine": "pgvector"}
        where, params = allowed.where, list(allowed.params)
        listed = allowed.seqs if allowed.seqs is not None else np.zeros(0, dtype=np.int64)
        excluded = listed[~np.asarray(allowed, dtype=bool)] if listed.size else listed  # entries a caller switched off
        if excluded.size:
            # one array parameter, not one placeholder per seq: the lifecycle probe switches off every
            # live admitted row (600K at 1M records), past PostgreSQL's 65,535 parameters per statement
            where += " AND r.seq <> ALL(?::bigint[])"
            params.append([int(s) for s in excluded])
        vec = vector_literal(query)
        if self.has_hnsw():
            order = f"(r.embedding_vec::vector({self.dim})) <#> ?::vector({self.dim})"
            how = {"method": "approximate", "reason": f"HNSW index (store has ≥ {self.hnsw_min_records} vectors)", "engine": "pgvector"}
        else:
            order = "r.embedding_vec <#> ?::vector"
            how = {"method": "exact", "reason": f"fewer than {self.hnsw_min_records} vectors: exact scan of the admitted rows",
                   "engine": "pgvector"}
        sql = (f"SELECT r.seq, -(r.embedding_vec <#> ?::vector) AS cosine FROM records r "
               f"WHERE {where} AND r.embedding_vec IS NOT NULL ORDER BY {order} LIMIT ?")
        rows = self.store.query(sql, [vec, *params, vec, int(k)])
        return [(int(row[0]), float(row[1])) for row in rows], how

    def similarity(self, query: np.ndarray, seqs: list[int]) -> dict[int, float]:
        """Cosine of ``query`` with each listed record's stored vector (records without one are left out)."""
        if not seqs:
            return {}
        rows = self.store.query(
            f"SELECT seq, -(embedding_vec <#> ?::vector) FROM records WHERE seq IN ({','.join('?' * len(seqs))}) "
            "AND embedding_vec IS NOT NULL AND status != 'deleted'", [vector_literal(query), *[int(s) for s in seqs]])
        return {int(row[0]): float(row[1]) for row in rows}

    def vectors(self, seqs: list[int]) -> np.ndarray:
        """The stored unit vectors of ``seqs`` as rows (a zero row for a seq without a live vector)."""
        out = np.zeros((len(seqs), self.dim), dtype=np.float32)
        if not seqs:
            return out
        rows = self.store.query(f"SELECT seq, embedding FROM records WHERE seq IN ({','.join('?' * len(seqs))}) "
                                "AND embedding IS NOT NULL AND status != 'deleted'", [int(s) for s in seqs])
        found = {int(row[0]): blob_to_vector(row[1]) for row in rows}
        for i, seq in enumerate(seqs):
            vector = found.get(int(seq))
            if vector is not None and vector.shape[0] == self.dim:
                out[i] = vector
        return out

    def count(self) -> int:
        return int(self.store.scalar("SELECT count(*) FROM records WHERE status != 'deleted' AND embedding_vec IS NOT NULL"))

    # -- keeping up ----------------------------------------------------------------------------

    def refresh(self) -> int:
        """Nothing to apply (the vectors are in the database); starts the HNSW build once the store is big enough."""
        if time.monotonic() - self._checked_at > 60:
            self._maybe_build_hnsw()
        return 0

    def rebuild(self) -> int:
        """Nothing to reload; checks whether the HNSW index is due. Returns the number of live vectors."""
        self._hnsw = None
        self._maybe_build_hnsw()
        return self.count()

    def has_hnsw(self) -> bool:
        if self._hnsw is None or (not self._hnsw and time.monotonic() - self._checked_at > 60):
            self._checked_at = time.monotonic()
            self._hnsw = bool(self.store.scalar(
                "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = ? AND i.indisvalid",
                (HNSW_INDEX,)))
        return self._hnsw

    def _maybe_build_hnsw(self, wait: bool = False) -> None:
        self._checked_at = time.monotonic()
        if self.has_hnsw() or (self._building is not None and self._building.is_alive()):
            return
        if self.count() < self.hnsw_min_records:
            return
        self._building = threading.Thread(target=self.build_hnsw, daemon=True, name="pg-hnsw-build")
        self._building.start()
        if wait:
            self._building.join()

    def build_hnsw(self) -> None:
        """Create the HNSW index without blocking writers (its own connection: CONCURRENTLY needs autocommit)."""
        import psycopg

        with psycopg.connect(self.store.url, autocommit=True) as conn:
            conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {HNSW_INDEX}")  # an invalid leftover of a failed build
            conn.execute(f"CREATE INDEX CONCURRENTLY {HNSW_INDEX} ON records USING hnsw "
                         f"((embedding_vec::vector({self.dim})) vector_ip_ops)")
        self._hnsw = None
