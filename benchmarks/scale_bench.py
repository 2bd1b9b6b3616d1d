"""Search past 200K records: the exact index at 200K, the approximate (faiss IVF) index at 1M.

    .venv/bin/python -m benchmarks.scale_bench [--sizes 200000 1000000] [--searches 200]

Stores: the search benchmark's synthetic multi-user corpus (``benchmarks/search_corpus.py``). Both
stores embed their first 50K records for real (the same vectors as the 50K search store) and give
every later record a synthetic vector, a noisy copy of one of those real vectors
(``benchmarks/synthetic_vectors.py`` says how): embedding 200K or 1M texts does not fit a session on
this machine (about 100 texts a second under the usual load). Texts, scopes, entities and FTS rows
are real for every record.

Per size and index, in a fresh process each: open the store (vector-index rebuild, plus the IVF
index where it applies: trained and saved with ``approximate-rebuild``, which removes the saved
file first, loaded from that file with ``approximate``) with its resident memory; then warm searches (the benchmark's query mix,
query-vector cache off) as the benchmark principal, who can read 60% of the records, once with the
exact index and once with the approximate one; per stage p50; recall@10 of the approximate dense
top-10 against the exact dense top-10 for the same queries and masks; and a check that no dense
hit of either ever falls outside the principal's readable scopes. Writes benchmarks/results/scale.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from memory_core import FixedClock, MemoryService, load_settings  # noqa: E402

from . import search_corpus  # noqa: E402
from .stats import machine, markdown_table, rss_mb, save, summary  # noqa: E402

CLOCK = "2026-03-05T10:00:00Z"
CORPUS_VERSION = "search-corpus-1"
REAL_VECTORS = {200_000: 50_000, 1_000_000: 50_000}


def store_path(size: int) -> Path:
    return search_corpus.OUT / f"search-{size}.sqlite"


def ensure_store(size: int) -> dict:
    """Build the store of ``size`` records unless an up-to-date one exists."""
    path = store_path(size)
    never = load_settings(retrieval={"ann_min_records": 10**9})
    if path.exists():
        with MemoryService.open(path, never, clock=FixedClock(CLOCK)) as service:
            if service.store.get_meta("bench_corpus") == CORPUS_VERSION:
                return json.loads(service.store.get_meta("bench_build") or "{}")
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    began = time.perf_counter()
    with MemoryService.open(path, never, clock=FixedClock(CLOCK)) as service:
        built = search_corpus.build(service, size, progress=lambda d, t: print(f"\r  embedding {d}/{t}", end="", flush=True),
                                    real_vectors=REAL_VECTORS.get(size))
        built["build_s"] = round(time.perf_counter() - began, 1)
        service.store.set_meta("bench_build", json.dumps(built))
        service.store.set_meta("bench_corpus", CORPUS_VERSION)
    print()
    return built


STAGES = ["query_embedding", "dense", "lexical", "entity", "fusion", "freshness", "gate", "collapse", "budget", "explain",
          "log_write", "hard_filter"]
READABLE = ["user:u0", "project:shared"]


def _settings(mode: str):
    # The query-vector cache is off: every timed search embeds its query.
    if mode == "exact":
        return load_settings(retrieval={"ann_min_records": 10**9, "query_cache_size": 0})
    return load_settings(retrieval={"query_cache_size": 0})


def probe(path: str, mode: str, searches: int) -> dict:
    """One fresh process: open, (build or load the IVF index), search, compare with exact; returns JSON-able figures.

    ``approximate-rebuild`` removes the persisted index file first, so the IVF index is trained
    (and saved); ``approximate`` uses the file an earlier run saved.
    """
    import numpy as np

    from memory_core.index.exact import ExactBackend

    if mode == "approximate-rebuild":
        Path(f"{path}.ivf").unlink(missing_ok=True)
    load_before = os.getloadavg()[0]
    began = time.perf_counter()
    service = MemoryService.open(path, _settings(mode), clock=FixedClock(CLOCK))
    open_s = time.perf_counter() - began
    backend = service.index.backend
    build_s = None
    if mode != "exact":
        began = time.perf_counter()
        ready = backend.wait_until_built()
        build_s = round(time.perf_counter() - began + open_s, 1) if ready else None
    rss_open = rss_mb()
    queries = search_corpus.queries(searches + 20)
    for query in queries[:20]:
        service.search(agent_id="bench", user_id="u0", query=query)
    wall, stages, methods, leaks = [], {s: [] for s in STAGES}, {}, 0
    exact_ms, approx_ms, recalls, tie_recalls = [], [], [], []
    mask = service.index.mask(READABLE, ("provisional", "confirmed"))
    allowed_seqs = set(int(x) for x in backend.seqs()[mask[: backend.seqs().shape[0]]])
    for query in queries[20:]:
        t0 = time.perf_counter()
        response = service.search(agent_id="bench", user_id="u0", query=query)
        wall.append((time.perf_counter() - t0) * 1000.0)
        for name, ms in response.trace.work_timings().items():
            if name in stages:
                stages[name].append(ms)
        how = (response.explanation.dense_index or {}).get("method", "exact")
        methods[how] = methods.get(how, 0) + 1
        leaks += sum(1 for r in response.results if r.record and r.record.scope not in READABLE)
        # the dense generator alone, exact against approximate, on the same query vector and mask
        vector, _ = service.retriever.query_vector(query, service.settings.retrieval)  # cached by the search
        with service.index._lock:
            t0 = time.perf_counter()
            exact = ExactBackend.search(backend, vector, 10, mask)
            exact_ms.append((time.perf_counter() - t0) * 1000.0)
            t0 = time.perf_counter()
            approx = backend.search(vector, 10, mask)
            approx_ms.append((time.perf_counter() - t0) * 1000.0)
        leaks += sum(1 for seq, _ in approx if seq not in allowed_seqs)
        recalls.append(len({s for s, _ in exact} & {s for s, _ in approx}) / max(1, len(exact)))
        # The corpus repeats texts, so several records share one vector: a hit whose exact cosine
        # ties the exact 10th best is as right as the id exact search happened to pick.
        tenth = exact[-1][1] if exact else 1.0
        tie_recalls.append(sum(1 for _, score in approx if score >= tenth - 1e-6) / max(1, len(exact)))
    out = {
        "mode": mode, "records": service.index.count(), "allowed_rows": int(mask.sum()), "open_s": round(open_s, 2),
        "ivf_build_s": build_s, "ivf": getattr(backend, "build_info", {}), "nprobe": getattr(backend, "nprobe", None),
        "rss_after_open_mb": rss_open.get("rss_mb"), **rss_mb(), "searches": len(wall),
        "total_ms": summary(wall), "stages_ms": {k: summary(v) for k, v in stages.items()}, "dense_methods": methods,
        "dense_exact_ms": summary(exact_ms), "dense_backend_ms": summary(approx_ms),
        "recall_at_10_vs_exact": round(float(np.mean(recalls)), 4), "recall_at_10_min": round(float(np.min(recalls)), 2),
        "recall_at_10_with_ties": round(float(np.mean(tie_recalls)), 4), "recall_at_10_with_ties_min": round(float(np.min(tie_recalls)), 2),
        "unreadable_hits": leaks, "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    service.close()
    return out


def markdown(results: dict) -> str:
    header = ["records", "index", "load (1 min) before/after", "search p50", "search p95", "dense p50", "query_embedding p50",
              "lexical p50", "dense top-10 alone p50 (exact / this index)", "recall@10 vs exact (ids)",
              "recall@10 vs exact (ties counted)", "unreadable hits",
              "open s", "IVF ready s after open began (how)", "RSS MB"]
    rows = []
    for run in results["runs"]:
        st = run["stages_ms"]
        ivf = run.get("ivf") or {}
        how = ("loaded from the saved file" if ivf.get("from_file") else
               f"trained{', saved in ' + str(ivf['save_s']) + ' s' if ivf.get('save_s') is not None else ''}")
        rows.append([f"{run['records']:,}", run["mode"] + (f" (nprobe {run['nprobe']}, {ivf.get('nlist')} lists)"
                                                          if not run["mode"].startswith("exact") else ""),
                     f"{run['load_average'][0]} / {run['load_average'][1]}", run["total_ms"]["p50"], run["total_ms"]["p95"],
                     st["dense"].get("p50"), st["query_embedding"].get("p50"), st["lexical"].get("p50"),
                     f"{run['dense_exact_ms']['p50']} / {run['dense_backend_ms']['p50']}", run["recall_at_10_vs_exact"],
                     run.get("recall_at_10_with_ties", "-"),
                     run["unreadable_hits"], run["open_s"],
                     f"{run['ivf_build_s']} ({how})" if run["ivf_build_s"] is not None else "-", run["rss_mb"]])
    return ("memory_search past 200K records, one embedding thread, searches by a principal who can read 60% of the records, "
            f"query-vector cache off ({results['searches']} searches per run); times in ms. Reproduce: "
            "`OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python -m benchmarks.scale_bench`.\n\n" + markdown_table(header, rows))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[200_000, 1_000_000])
    parser.add_argument("--modes", nargs="+", default=["exact", "approximate-rebuild", "approximate"])
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--probe", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--build-only", action="store_true")
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(probe(args.probe[0], args.probe[1], int(args.probe[2]))))
        return
    results = {"benchmark": "memory_search at scale", "machine": machine(), "searches": args.searches, "runs": [],
               "load_average_before": [round(x, 2) for x in os.getloadavg()]}
    for size in args.sizes:
        results.setdefault("builds", {})[str(size)] = ensure_store(size)
        if args.build_only:
            continue
        for mode in args.modes:
            done = subprocess.run([sys.executable, "-m", "benchmarks.scale_bench", "--probe", str(store_path(size)), mode,
                                   str(args.searches)], capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent)
            if done.returncode != 0:
                print(done.stderr[-2000:], flush=True)
                continue
            run = json.loads(done.stdout.strip().splitlines()[-1])
            print(json.dumps(run), flush=True)
            results["runs"].append(run)
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    if results["runs"]:
        text = markdown(results)
        save("scale", results, text)
        print(text)


if __name__ == "__main__":
    main()
