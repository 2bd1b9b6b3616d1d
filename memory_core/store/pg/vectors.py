"""Named queries of dense search on PostgreSQL (pgvector over ``records.embedding_vec``).

:class:`~memory_core.index.pg_vector.PgVectorIndex` decides what to run (exact or approximate, when
to build the approximate index, how to explain the path); the statements it runs are here, so the
index layer holds no SQL. A filter's predicate (``where`` over ``records AS r``, with ``params``)
comes from the search's hard filter and is put into each statement's WHERE clause as given.
"""

from __future__ import annotations

from typing import Any

ANN_INDEX = "records_embedding_ivf"  # the approximate index, of either kind (the name is kept from when only IVF was built)
OLD_HNSW_INDEX = "records_embedding_hnsw"
HNSW_M, HNSW_EF_CONSTRUCTION = 16, 64  # pgvector's defaults
_RECORDS_VERSION = "(SELECT value FROM store_meta WHERE key = 'records_version')"


def set_search_options(store, probes: int, ef_search: int) -> None:
    """Session settings of the store's connection for approximate search: IVF probes, HNSW ef_search,
    and iterative scans (under a selective filter the first probes may hold fewer than k admitted
    rows: more lists are then scanned until k are found)."""
    with store.lock:
        store.conn.execute_native(f"SET ivfflat.probes = {int(probes)}")
        store.conn.execute_native("SET ivfflat.iterative_scan = relaxed_order")
        store.conn.execute_native(f"SET hnsw.ef_search = {int(ef_search)}")
        store.conn.execute_native("SET hnsw.iterative_scan = relaxed_order")


def filter_clauses(scopes, statuses, types) -> tuple[list[str], list]:
    """Scope, status and type as WHERE clauses over ``records AS r`` (also over ``record_counts AS r``)."""
    pairs = [scope.split(":", 1) for scope in scopes]
    clauses = [f"(r.scope_kind, r.scope_id) IN (VALUES {', '.join('(?, ?)' for _ in pairs)})",
               f"r.status IN ({', '.join('?' * len(statuses))})"]
    params: list = [part for pair in pairs for part in pair] + list(statuses)
    if types:
        clauses.append(f"r.type IN ({', '.join('?' * len(types))})")
        params.extend(types)
    return clauses, params


def count_admitted(store, where: str, params) -> int:
    """Rows with a vector under ``where``, counted one by one (for an event-time window)."""
    return int(store.scalar(f"SELECT count(*) FROM records r WHERE {where} AND r.embedding_vec IS NOT NULL", list(params)))


def count_from_table(store, scopes, statuses, types, lapsed_at: str | None) -> tuple[int, int, int]:
    """The admitted rows from ``record_counts`` (kept by triggers on ``records``), less the
    provisional records with a vector past their expiry at ``lapsed_at``, in one round trip.
    Returns (admitted, lapsed provisional excluded, the store's records version read with them)."""
    return counted(store.query_one(*count_statement(scopes, statuses, types, lapsed_at)))


def count_statement(scopes, statuses, types, lapsed_at: str | None) -> tuple[str, list]:
    """:func:`count_from_table`'s statement and parameters (to send in a batch with others)."""
    clauses, params = filter_clauses(scopes, statuses, types)
    counted = f"COALESCE((SELECT sum(r.n) FROM record_counts r WHERE {' AND '.join(clauses)}), 0)"
    if lapsed_at is None:
        return f"SELECT {counted}, 0, {_RECORDS_VERSION}", params
    scope_type = [c for c in clauses if not c.startswith("r.status")]
    lapsed_params = params[:2 * len(scopes)] + (list(types) if types else [])
    return (f"SELECT {counted}, (SELECT count(*) FROM records r WHERE r.status = 'provisional' AND r.expires_at IS NOT NULL "
            f"AND r.expires_at <= ? AND r.embedding_vec IS NOT NULL AND {' AND '.join(scope_type)}), {_RECORDS_VERSION}",
            [*params, lapsed_at, *lapsed_params])


def counted(row) -> tuple[int, int, int]:
    """:func:`count_from_table`'s answer from its statement's row."""
    return int(row[0]) - int(row[1]), int(row[1]), int(row[2]) if row[2] is not None else 0


def nearest(store, vector: str, k: int, where: str, params, *, approximate_dim: int | None = None,
            columns: str = "") -> list:
    """The ``k`` rows under ``where`` nearest to ``vector`` (a pgvector literal), each as
    (``hit_seq``, ``cosine``, then ``columns`` over ``r``).

    Exact when ``approximate_dim`` is None (ordered by an expression no index serves, so the admitted
    rows are scanned); otherwise ordered by the expression the approximate index of that dimension
    serves. Either way the filter is in the WHERE clause, so no row outside it is returned."""
    if approximate_dim is None:
        order = "r.embedding_vec <#> ?::vector"
    else:
        order = f"(r.embedding_vec::vector({int(approximate_dim)})) <#> ?::vector({int(approximate_dim)})"
    extra = f", {columns}" if columns else ""
    sql = (f"SELECT r.seq AS hit_seq, -(r.embedding_vec <#> ?::vector) AS cosine{extra} FROM records r "
           f"WHERE {where} AND r.embedding_vec IS NOT NULL ORDER BY {order} LIMIT ?")
    return store.query(sql, [vector, *params, vector, int(k)])


def cosines(store, vector: str, seqs: list[int]) -> dict[int, float]:
    """Cosine of ``vector`` with each listed live record's stored vector (records without one are left out)."""
    if not seqs:
        return {}
    rows = store.query(
        f"SELECT seq, -(embedding_vec <#> ?::vector) FROM records WHERE seq IN ({','.join('?' * len(seqs))}) "
        "AND embedding_vec IS NOT NULL AND status != 'deleted'", [vector, *[int(s) for s in seqs]])
    return {int(row[0]): float(row[1]) for row in rows}


def embedding_blobs(store, seqs: list[int]) -> dict[int, Any]:
    """The stored embedding blob of each listed live record that has one."""
    if not seqs:
        return {}
    rows = store.query(f"SELECT seq, embedding FROM records WHERE seq IN ({','.join('?' * len(seqs))}) "
                       "AND embedding IS NOT NULL AND status != 'deleted'", [int(s) for s in seqs])
    return {int(row[0]): row[1] for row in rows}


def live_vector_count(store) -> int:
    """Live vectors, from ``record_counts`` (one small aggregate, not a count of the rows)."""
    return int(store.scalar("SELECT COALESCE(sum(n), 0) FROM record_counts WHERE status != 'deleted'"))


def ann_index_state(store) -> tuple[list[str] | None, str] | None:
    """The valid approximate index's (reloptions, access method), or None when there is none."""
    row = store.query_one(
        "SELECT c.reloptions, a.amname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "JOIN pg_am a ON a.oid = c.relam WHERE c.relname = ? AND i.indisvalid", (ANN_INDEX,))
    return None if row is None else (row[0], row[1])


def build_ann_index(url: str, kind: str, dim: int, lists: int, memory_mb: int) -> None:
    """Create (or replace) the approximate index of ``kind`` (``ivfflat`` with ``lists``, or ``hnsw``)
    without blocking writers: built concurrently under a new name, then swapped in by renames, so
    searches always find one valid index (its own connection: CONCURRENTLY needs autocommit)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        # pgvector refuses to build when its k-means sample does not fit maintenance_work_mem
        conn.execute(f"SET maintenance_work_mem = '{int(memory_mb)}MB'")
        conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {ANN_INDEX}_new")  # an invalid leftover of a failed build
        options = f"lists = {int(lists)}" if kind == "ivfflat" else f"m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}"
        conn.execute(f"CREATE INDEX CONCURRENTLY {ANN_INDEX}_new ON records USING {kind} "
                     f"((embedding_vec::vector({int(dim)})) vector_ip_ops) WITH ({options})")
        conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {ANN_INDEX}_old")
        conn.execute(f"ALTER INDEX IF EXISTS {ANN_INDEX} RENAME TO {ANN_INDEX}_old")
        conn.execute(f"ALTER INDEX {ANN_INDEX}_new RENAME TO {ANN_INDEX}")
        conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {ANN_INDEX}_old")
        # the HNSW index of earlier versions serves the same expression: the planner must not pick it
        conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {OLD_HNSW_INDEX}")
