"""Dense search on PostgreSQL, the options side by side: exact SQL scan, in-process matrix, ivfflat.

    nice -n 10 .venv/bin/python -m benchmarks.pg_dense_options [--sizes 10000 50000 200000] [--searches 100]
        [--probes 8 32] [--source benchmarks/out/search-50000.sqlite] [--pg-url postgresql://...] [--out DIR]

What is timed is the dense generator's call on the PostgreSQL index, as a search makes it: the hard
filter as SQL with its count (``PgVectorIndex.filter_mask``) and ``search_with_rows`` for the top
``retrieval.candidates_per_generator`` (30) with the candidate columns, warm, one process:

- ``sql``: ``postgres.dense_search = "sql"``, the exact pgvector scan of the admitted rows;
- ``matrix``: ``postgres.dense_search = "matrix"`` (memory_core/index/pg_matrix.py): numpy over this
  process's matrix, the best rows confirmed by the filter's SQL. Also reported: the numpy ranking
  alone, the load of the matrix (rows read from the server and decoded), and the resident memory it adds;
- ``ivfflat``: pgvector's IVF index (lists = the square root of the store, as the backend builds it),
  at each ``--probes``, with its build time.

Recall@10 of every option against ``sql`` (ties counted: a hit whose cosine is at least the exact 10th
best's, less 1e-5, counts), mean and minimum over the queries. Two filters: ``wide`` (``user:u0`` and
``project:shared``, about 60% of the rows, the search benchmark's principal) and ``narrow``
(``project:shared``, about 20%).

Data: by default synthetic (no model needed): ``size`` unit vectors around 2,000 random centres
(:func:`benchmarks.synthetic_vectors.noisy_copies`), spread over ``user:u0`` (40%), ``project:shared``
(20%) and ``user:u1``..``u9``, 90% confirmed, 5% provisional, 5% superseded, written with COPY into a
store the backend migrated (the count triggers on); queries are other noisy copies of the centres.
``--source`` loads the first ``size`` records of a search-benchmark SQLite store instead
(:mod:`benchmarks.pg_bulk_load`) and embeds the benchmark's queries with the packaged MiniLM.
Server: a pgserver in a temporary directory (``benchmarks.pg_bench.Server``) unless ``--pg-url``.
Writes ``<out>/pg_dense_options.{json,md}`` (default ``benchmarks/results``).
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

from memory_core.index.pg_matrix import PgMatrix  # noqa: E402
from memory_core.index.pg_vector import PgVectorIndex, ivf_build_memory_mb, ivf_lists  # noqa: E402
from memory_core.retrieve.filters import HardFilter  # noqa: E402
from memory_core.settings import default_settings  # noqa: E402
from memory_core.store.backend import open_store  # noqa: E402
from memory_core.store.pg.vectors import build_ann_index  # noqa: E402
from memory_core.store.records import LIVE_STATUSES  # noqa: E402
from memory_core.store.search_queries import CANDIDATE_COLUMNS  # noqa: E402

from .pg_bench import Server  # noqa: E402
from .pg_bulk_load import _vector_dumper  # noqa: E402
from .stats import RESULTS, load_average, machine, markdown_table, rss_mb, save, summary  # noqa: E402
from .synthetic_vectors import noisy_copies  # noqa: E402

CLOCK = "2026-03-05T10:00:00Z"
DIM = 384
FILTERS = {"wide": ("user:u0", "project:shared"), "narrow": ("project:shared",)}


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg} (load {load_average()[0]})", flush=True)


def _scope(i: int, rng: np.random.Generator) -> tuple[str, str]:
    r = rng.random()
    return ("user", "u0") if r < 0.4 else ("project", "shared") if r < 0.6 else ("user", f"u{1 + i % 9}")


def load_synthetic(url: str, size: int, centres: np.ndarray) -> float:
    """``size`` synthetic records written with COPY (binary) into the migrated store at ``url``; seconds."""
    import psycopg

    began = time.perf_counter()
    open_store(url, CLOCK).close()  # the backend's own schema
    vectors = noisy_copies(centres, size, seed=11)
    rng = np.random.default_rng(5)
    with psycopg.connect(url) as conn:
        vector_oid = _vector_dumper(conn)  # float32 bytes -> pgvector's binary form
        columns = ["id", "type", "lineage_id", "content", "scope_kind", "scope_id", "source_kind", "created_at", "updated_at",
                   "confidence", "status", "embedding", "embed_model", "embed_version", "embed_dim", "embedding_vec"]
        text, byte, vec = 25, 17, vector_oid
        types = [text] * 9 + [701, text, byte, text, text, 20, vec]
        with conn.cursor().copy(f"COPY records ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(types)
            for i in range(size):
                kind, scope_id = _scope(i, rng)
                status = "confirmed" if i % 20 < 18 else "provisional" if i % 20 == 18 else "superseded"
                v = vectors[i]
                copy.write_row([f"mem_b{i:08d}", "semantic", f"lin_{i}", f"synthetic record {i}", kind, scope_id, "tool_result",
                                CLOCK, CLOCK, 0.8, status, v.tobytes(), "synthetic", "1", DIM, v.tobytes()])
        conn.commit()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE records")
    return time.perf_counter() - began


def _filter(scopes) -> HardFilter:
    return HardFilter(scopes=scopes, statuses=LIVE_STATUSES, types=None, event_from=None, event_to=None, now=CLOCK,
                      include_lapsed=False)


def _run(index: PgVectorIndex, queries: np.ndarray, scopes, k: int) -> tuple[list[float], list[list[tuple[int, float]]], set]:
    flt = _filter(scopes)
    for q in queries[:5]:  # warm
        index.search_with_rows(q, k, index.filter_mask(flt), CANDIDATE_COLUMNS)
    times, hits, engines = [], [], set()
    for q in queries:
        began = time.perf_counter()
        found, how, _ = index.search_with_rows(q, k, index.filter_mask(flt), CANDIDATE_COLUMNS)
        times.append((time.perf_counter() - began) * 1000.0)
        hits.append(found)
        engines.add(how.get("engine"))
    return times, hits, engines


def recall_at_10(got: list[list[tuple[int, float]]], exact: list[list[tuple[int, float]]]) -> dict:
    """Mean and minimum recall@10 against ``exact``, ties counted (see the module docstring)."""
    values = []
    for g, e in zip(got, exact):
        best = sorted(e, key=lambda h: -h[1])[:10]
        if not best:
            continue
        floor = best[-1][1] - 1e-5
        mine = sorted(g, key=lambda h: -h[1])[:10]
        values.append(sum(1 for _, c in mine if c >= floor) / len(best))
    return {"mean": round(float(np.mean(values)), 4) if values else None, "min": round(float(min(values)), 4) if values else None}


def measure(url: str, size: int, queries: np.ndarray, probes: list[int], k: int) -> dict:
    out: dict = {"size": size, "load_before": load_average()}
    store = open_store(url, CLOCK)
    sql = PgVectorIndex(store, DIM, ann_min_records=10**9, exact_max_rows=10**9, dense_search="sql")
    mstore = open_store(url, CLOCK)
    matrix = PgVectorIndex(mstore, DIM, dense_search="matrix", matrix_max_records=10**9, exact_max_rows=10**9)
    before = rss_mb().get("rss_mb", 0.0)
    began = time.perf_counter()
    loaded = PgMatrix(mstore, DIM)
    loaded.rebuild()
    matrix.matrix = loaded
    out["matrix_load_s"] = round(time.perf_counter() - began, 2)
    out["matrix_rss_added_mb"] = round(rss_mb().get("rss_mb", 0.0) - before, 1)
    out["matrix_mb"] = round(loaded.backend.count() * DIM * 4 / 2**20, 1)  # the live rows' vectors alone
    exact: dict[str, list] = {}
    for name, scopes in FILTERS.items():
        row: dict = {}
        times, exact[name], _ = _run(sql, queries, scopes, k)
        row["sql"] = {"ms": summary(times)}
        times, hits, engines = _run(matrix, queries, scopes, k)
        row["matrix"] = {"ms": summary(times), "recall@10": recall_at_10(hits, exact[name]), "engines": sorted(engines)}
        terms = matrix.filter_mask(_filter(scopes)).terms
        ranking = []
        for q in queries:
            began = time.perf_counter()
            loaded.rank(q, terms)
            ranking.append((time.perf_counter() - began) * 1000.0)
        row["matrix_numpy_rank"] = {"ms": summary(ranking)}
        out[name] = row
        _log(f"{size} {name}: sql p50 {row['sql']['ms']['p50']} ms, matrix p50 {row['matrix']['ms']['p50']} ms")
    lists = ivf_lists(size)
    began = time.perf_counter()
    build_ann_index(url, "ivfflat", DIM, lists, ivf_build_memory_mb(lists, DIM))
    out["ivfflat"] = {"lists": lists, "build_s": round(time.perf_counter() - began, 1)}
    for p in probes:
        ivf = PgVectorIndex(open_store(url, CLOCK), DIM, ann_min_records=1, probes=p, exact_max_rows=0, dense_search="sql")
        for name, scopes in FILTERS.items():
            times, hits, engines = _run(ivf, queries, scopes, k)
            out[name][f"ivfflat_{p}"] = {"ms": summary(times), "recall@10": recall_at_10(hits, exact[name]), "engines": sorted(engines)}
        ivf.store.close()
    store.close()
    mstore.close()
    out["load_after"] = load_average()
    return out


def _queries(args, centres: np.ndarray) -> np.ndarray:
    if args.source is None:
        return noisy_copies(centres, args.searches, seed=23)
    from memory_core.embed import build_embedder

    from . import search_corpus

    embedder = build_embedder(default_settings().embedder)
    return np.asarray(embedder.embed(search_corpus.queries(args.searches)), dtype=np.float32)


def render(data: dict) -> str:
    rows = []
    for run in data["runs"]:
        for name in FILTERS:
            for option, values in run[name].items():
                recall = values.get("recall@10", {})
                rows.append([run["size"], name, option, values["ms"]["p50"], values["ms"]["p95"],
                             recall.get("mean", "exact"), recall.get("min", "")])
    notes = [f"- {run['size']}: matrix load {run['matrix_load_s']} s, {run['matrix_mb']} MB of vectors "
             f"(+{run['matrix_rss_added_mb']} MB resident); "
             f"ivfflat {run['ivfflat']['lists']} lists built in {run['ivfflat']['build_s']} s; load {run['load_before']} -> "
             f"{run['load_after']}" for run in data["runs"]]
    return "\n".join([f"# Dense search options on PostgreSQL ({data['data']}, {data['searches']} queries, k {data['k']})", "",
                      markdown_table(["records", "filter", "option", "p50 ms", "p95 ms", "recall@10 mean", "min"], rows), "",
                      *notes, "", f"{data['server']}; {data['machine']}"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 200_000])
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--probes", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--source", type=Path, default=None, help="a search-benchmark SQLite store (real vectors)")
    parser.add_argument("--pg-url", default=None)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    k = default_settings().retrieval.candidates_per_generator
    centres = noisy_copies(np.eye(1, DIM, dtype=np.float32), 2_000, target_cosine=0.05, seed=3)  # ~random unit centres
    queries = _queries(args, centres)
    server = Server(args.pg_url)
    runs = []
    try:
        for size in args.sizes:
            url = server.database()
            if args.source is not None:
                from .pg_bulk_load import bulk_load

                seconds = bulk_load(args.source, url, size)["total_s"]
            else:
                seconds = load_synthetic(url, size, centres)
            _log(f"{size} records loaded in {round(seconds, 1)} s")
            runs.append(measure(url, size, queries, args.probes, k))
        data = {"data": "synthetic" if args.source is None else str(args.source), "searches": args.searches, "k": k,
                "server": server.version(), "machine": machine(), "runs": runs}
    finally:
        server.stop()
    save("pg_dense_options", data, render(data), args.out)
    print(render(data))


if __name__ == "__main__":
    main()
