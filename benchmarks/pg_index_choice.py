"""Which approximate index for the PostgreSQL backend at 1M records: the candidates measured one at a time.

    nice -n 10 .venv/bin/python -m benchmarks.pg_index_choice [--source benchmarks/out/search-1000000.sqlite]
                                                              [--url postgresql://...] [--no-global-hnsw]

Loads the search benchmark's 1M store into a fresh pgserver database (:mod:`benchmarks.pg_bulk_load`;
``--url`` reuses a database already loaded by it), embeds the benchmark's queries (packaged MiniLM),
and computes the exact top 10 of each query with numpy over every stored vector, three ways: over the
whole store, over the principal's readable scopes (``user:u0`` and ``project:shared``, 60% of the
records: the filter the search benchmark applies), and over ``project:shared`` alone (20%). Then each
candidate index is built (timed), queried with the same SQL the backend runs (the filter in the WHERE
clause, ordered by the indexed expression, ``LIMIT 30``; the best 10 by cosine compared), and dropped:

- ``ivfflat``, 1,000 lists (the square root of the store, as the SQLite store's faiss IVF), at several
  ``ivfflat.probes``, under the 60% filter, under the 20% filter and without a filter;
- ``hnsw`` partial index on ``project:shared`` only (the filter pushed into the index: one graph
  per large owner scope), queried for that scope, at several ``hnsw.ef_search``;
- ``hnsw`` over the whole store (m 16, ef_construction 64: pgvector's defaults) under the 60% filter
  with ``relaxed_order`` and ``strict_order`` iterative scans, and without a filter (is recall low
  because of the filter or because of the data?). ``--no-global-hnsw`` skips it (its build is the
  longest);
- the exact scan of the filtered rows (no index), for its time.

Recall@10 is given by id and with ties counted (a hit whose cosine is at least the exact 10th best's,
less 1e-5, counts: the synthetic store has many records with equal scores). Writes
``results/pg_index_choice.{json,md}``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from memory_core import load_settings  # noqa: E402
from memory_core.embed import build_embedder  # noqa: E402
from memory_core.store.records import vector_literal  # noqa: E402

from . import search_corpus  # noqa: E402
from .pg_bench import Server  # noqa: E402
from .pg_bulk_load import bulk_load  # noqa: E402
from .stats import load_average, machine, markdown_table, save  # noqa: E402

DEFAULT_SOURCE = Path(__file__).resolve().parent / "out" / "search-1000000.sqlite"
READABLE = "(r.scope_kind, r.scope_id) IN (VALUES ('user', 'u0'), ('project', 'shared')) AND r.status IN ('provisional', 'confirmed')"
SHARED = "r.scope_kind = 'project' AND r.scope_id = 'shared' AND r.status IN ('provisional', 'confirmed')"
ORDER = "(r.embedding_vec::vector(384)) <#> %s::vector(384)"
EXACT_ORDER = "r.embedding_vec <#> %s::vector"
K = 30


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg} (load {load_average()[0]})", flush=True)


def exact_truth(url: str, queries: np.ndarray) -> dict:
    """Exact top 30 per query (seqs, and the 10th best cosine) with numpy, for three filters."""
    import psycopg

    seqs, scopes, vectors = [], [], []
    with psycopg.connect(url) as conn:
        cur = conn.cursor(name="all_vectors")
        cur.itersize = 50_000
        cur.execute("SELECT seq, scope_id, embedding FROM records WHERE embedding_vec IS NOT NULL AND status IN "
                    "('provisional', 'confirmed') ORDER BY seq")
        for seq, scope, blob in cur:
            seqs.append(seq)
            scopes.append(scope)
            vectors.append(np.frombuffer(blob, dtype=np.float32))
    seq_arr, scope_arr, matrix = np.array(seqs), np.array(scopes), np.vstack(vectors)
    scores = queries @ matrix.T
    out = {}
    for name, allowed in (("all", np.ones(len(seq_arr), dtype=bool)), ("readable", np.isin(scope_arr, ["u0", "shared"])),
                          ("shared", scope_arr == "shared")):
        tops, tenth = [], []
        for row in scores:
            masked = np.where(allowed, row, -9.0)
            idx = np.argpartition(-masked, K)[:K]
            idx = idx[np.argsort(-masked[idx])]
            tops.append(seq_arr[idx])
            tenth.append(float(masked[idx[9]]))
        out[name] = (np.array(tops), np.array(tenth))
    return out


def measure(url: str, label: str, queries: np.ndarray, truth, where: str, settings: list[str], order: str = ORDER,
            drop: tuple[str, ...] = ()) -> dict:
    """Run every query under ``where`` with the session ``settings``; latency and recall@10 against ``truth``.
    ``drop``: indexes dropped inside the measuring transaction (rolled back), so the planner cannot pick them."""
    import psycopg

    tops, tenth = truth
    times, by_id, with_ties = [], [], []
    with psycopg.connect(url, autocommit=not drop) as conn:
        for name in drop:
            conn.execute(f"DROP INDEX {name}")
        for statement in settings:
            conn.execute(statement)
        sql = (f"SELECT r.seq, -(r.embedding_vec <#> %s::vector) FROM records r WHERE {where} AND r.embedding_vec IS NOT NULL "
               f"ORDER BY {order} LIMIT {K}")
        literal = vector_literal(queries[0])
        plan = [r[0].strip() for r in conn.execute("EXPLAIN " + sql, (literal, literal)).fetchall() if "Scan" in r[0]]
        for i, query in enumerate(queries):
            literal = vector_literal(query)
            began = time.perf_counter()
            rows = conn.execute(sql, (literal, literal)).fetchall()
            times.append((time.perf_counter() - began) * 1000.0)
            best = sorted(rows, key=lambda row: -row[1])[:10]
            by_id.append(len({seq for seq, _ in best} & set(tops[i][:10].tolist())) / 10)
            with_ties.append(min(1.0, sum(1 for _, cosine in best if cosine >= tenth[i] - 1e-5) / 10))
        if drop:
            conn.rollback()
    result = {"label": label, "p50_ms": round(float(np.percentile(times, 50)), 2), "p95_ms": round(float(np.percentile(times, 95)), 2),
              "recall_at_10": round(float(np.mean(by_id)), 4), "recall_at_10_ties_counted": round(float(np.mean(with_ties)), 4),
              "plan": plan[0] if plan else "", "load_average": load_average()}
    _log(str(result))
    return result


def build(url: str, label: str, sql: str) -> dict:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '4GB'")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        before = load_average()
        began = time.perf_counter()
        conn.execute(sql)
        seconds = time.perf_counter() - began
        name = sql.split()[2]
        size = conn.execute(f"SELECT pg_size_pretty(pg_relation_size('{name}'))").fetchone()[0]
    result = {"index": label, "build_s": round(seconds, 1), "size": size, "load_average": [before[0], load_average()[0]]}
    _log(str(result))
    return result


def drop(url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX IF EXISTS {name}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--url", default=None, help="a database bulk_load already filled (skips the load)")
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--no-global-hnsw", action="store_true")
    args = parser.parse_args()
    server = None if args.url else Server(None)
    data: dict = {"machine": machine(), "load_average_start": load_average(), "builds": [], "runs": []}
    try:
        url = args.url or server.database()
        if not args.url:
            _log("loading")
            data["load_s"] = bulk_load(args.source, url, None)["total_s"]
        embedder = build_embedder(load_settings().embedder)
        texts = search_corpus.queries(args.queries + 20)[20:]
        queries = np.asarray(embedder.embed(texts), dtype=np.float32)
        _log("exact answers (numpy)")
        truth = exact_truth(url, queries)
        runs = data["runs"]
        runs.append(measure(url, "exact scan, 60% filter", queries[:20], (truth["readable"][0][:20], truth["readable"][1][:20]),
                            READABLE, [], EXACT_ORDER))
        # -- IVF
        data["builds"].append(build(url, "ivfflat lists 1000", "CREATE INDEX cand_ivf ON records USING ivfflat "
                                    "((embedding_vec::vector(384)) vector_ip_ops) WITH (lists = 1000)"))
        for probes in (8, 16, 32, 64):
            runs.append(measure(url, f"ivfflat probes {probes}, 60% filter", queries, truth["readable"], READABLE,
                                [f"SET ivfflat.probes = {probes}", "SET ivfflat.iterative_scan = relaxed_order"]))
        runs.append(measure(url, "ivfflat probes 32, 20% filter (project:shared)", queries, truth["shared"], SHARED,
                            ["SET ivfflat.probes = 32", "SET ivfflat.iterative_scan = relaxed_order"]))
        runs.append(measure(url, "ivfflat probes 32, no filter", queries, truth["all"], "r.status IN ('provisional', 'confirmed')",
                            ["SET ivfflat.probes = 32"]))
        # -- HNSW, one partial index per large owner scope (here project:shared, 200K rows)
        data["builds"].append(build(url, "hnsw partial on project:shared (200K rows), m 16, ef_construction 64",
                                    "CREATE INDEX cand_hnsw_shared ON records USING hnsw ((embedding_vec::vector(384)) vector_ip_ops) "
                                    "WHERE scope_kind = 'project' AND scope_id = 'shared'"))
        for ef in (40, 100, 400, 1000):
            runs.append(measure(url, f"hnsw partial (project:shared), ef_search {ef}, no other filter", queries, truth["shared"],
                                SHARED, [f"SET hnsw.ef_search = {ef}"], drop=("cand_ivf",)))
        drop(url, "cand_hnsw_shared")
        # -- HNSW over the whole store
        if not args.no_global_hnsw:
            drop(url, "cand_ivf")
            data["builds"].append(build(url, "hnsw whole store, m 16, ef_construction 64",
                                        "CREATE INDEX cand_hnsw ON records USING hnsw ((embedding_vec::vector(384)) vector_ip_ops)"))
            for ef in (100, 400, 1000):
                runs.append(measure(url, f"hnsw ef_search {ef}, no filter", queries, truth["all"], "r.status IN ('provisional', 'confirmed')",
                                    [f"SET hnsw.ef_search = {ef}"]))
                for mode in ("relaxed_order", "strict_order"):
                    runs.append(measure(url, f"hnsw ef_search {ef}, 60% filter, {mode}", queries, truth["readable"], READABLE,
                                        [f"SET hnsw.ef_search = {ef}", f"SET hnsw.iterative_scan = {mode}"]))
    finally:
        if server is not None:
            server.stop()
        data["load_average_end"] = load_average()
    save("pg_index_choice", data, render(data))
    print(render(data))


def render(data: dict) -> str:
    lines = [f"Load average at start {data['load_average_start']}, at end {data['load_average_end']} (2 cores, shared).", "",
             markdown_table(["index", "build s", "size", "load (1 min) before → after"],
                            [[b["index"], b["build_s"], b["size"], f"{b['load_average'][0]} → {b['load_average'][1]}"]
                             for b in data["builds"]]), "",
             markdown_table(["query path", "p50 ms", "p95 ms", "recall@10 by id", "recall@10 ties counted", "plan", "load (1 min)"],
                            [[r["label"], r["p50_ms"], r["p95_ms"], r["recall_at_10"], r["recall_at_10_ties_counted"],
                              r["plan"][:70], r["load_average"][0]] for r in data["runs"]])]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
