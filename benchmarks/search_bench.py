"""memory_search latency, warm and cold, on stores of 1K, 10K and 50K records, per stage.

    .venv/bin/python -m benchmarks.search_bench [--sizes 1000 10000 50000] [--searches 300] [--cold-runs 2]

No reranker, no rewrite (the defaults), the packaged MiniLM embedder. Stores are bulk-built once
(benchmarks/search_corpus.py explains how) and kept in benchmarks/out/. Warm: one process, the
model loaded and 20 warm-up searches, then ``--searches`` calls of ``MemoryService.search`` cycling
through 60 queries (about one in ten off-topic, so the empty path and its lifecycle probe are in
the mix). Cold: a fresh process per run that imports the library, opens the store (model load +
vector index rebuild) and runs its first search. Writes benchmarks/out/search-bench.json and the
committed summary benchmarks/results/search.{json,md}.
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

_IMPORT_START = time.perf_counter()
from memory_core import FixedClock, MemoryService, load_settings  # noqa: E402

_IMPORT_S = time.perf_counter() - _IMPORT_START

from . import search_corpus  # noqa: E402
from .stats import machine, markdown_table, save, summary  # noqa: E402

CLOCK = "2026-03-05T10:00:00Z"
CORPUS_VERSION = "search-corpus-1"
STAGES = ["rewrite", "scope_resolution", "hard_filter", "query_embedding", "dense", "lexical", "entity", "fusion",
          "freshness", "gate", "collapse", "rerank", "budget", "explain", "log_write"]
QUERIES = search_corpus.queries(60)


def store_path(size: int) -> Path:
    return search_corpus.OUT / f"search-{size}.sqlite"


def ensure_store(size: int) -> dict:
    """Build the store of ``size`` records unless an up-to-date one exists."""
    path = store_path(size)
    if path.exists():
        with MemoryService.open(path, load_settings(), clock=FixedClock(CLOCK)) as service:
            if service.store.get_meta("bench_corpus") == CORPUS_VERSION:
                return json.loads(service.store.get_meta("bench_build") or "{}")
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    began = time.perf_counter()
    with MemoryService.open(path, load_settings(), clock=FixedClock(CLOCK)) as service:
        built = search_corpus.build(service, size, progress=lambda d, t: print(f"\r  embedding {d}/{t}", end="", flush=True))
        built["build_s"] = round(time.perf_counter() - began, 1)
        service.store.set_meta("bench_build", json.dumps(built))
        service.store.set_meta("bench_corpus", CORPUS_VERSION)
    print()
    return built


def _search(service, query: str):
    return service.search(agent_id="bench", user_id="u0", query=query)


def warm(size: int, searches: int) -> dict:
    with MemoryService.open(store_path(size), load_settings(), clock=FixedClock(CLOCK)) as service:
        with service.store.transaction() as conn:
            conn.execute("DELETE FROM search_log")
        for query in QUERIES[:20]:
            _search(service, query)
        wall, stages, counts, empty = [], {name: [] for name in STAGES}, {k: [] for k in ("dense", "lexical", "entity", "fused")}, 0
        returned, without_model = [], []
        for i in range(searches):
            began = time.perf_counter()
            response = _search(service, QUERIES[i % len(QUERIES)])
            wall.append((time.perf_counter() - began) * 1000.0)
            without_model.append(wall[-1] - response.trace.timings()["query_embedding"])
            for name, ms in response.trace.timings().items():
                stages[name].append(ms)
            for key, value in response.explanation.candidates.items():
                counts[key].append(value)
            empty += response.empty
            returned.append(len(response.results))
        return {
            "records": service.stats()["records"], "indexed_vectors": service.index.count(), "searches": searches,
            "total_ms": summary(wall), "total_without_query_embedding_ms": summary(without_model), "stages_ms": {name: summary(values) for name, values in stages.items()},
            "candidates_mean": {k: round(sum(v) / len(v), 1) for k, v in counts.items()},
            "empty_share": round(empty / searches, 3), "results_mean": round(sum(returned) / len(returned), 2),
        }


def probe(path: str) -> None:
    """Cold run (a fresh process): open the store and time the first two searches; prints JSON."""
    began = time.perf_counter()
    service = MemoryService.open(path, load_settings(), clock=FixedClock(CLOCK))
    open_ms = (time.perf_counter() - began) * 1000.0
    began = time.perf_counter()
    first = _search(service, QUERIES[0])
    first_ms = (time.perf_counter() - began) * 1000.0
    began = time.perf_counter()
    _search(service, QUERIES[1])
    second_ms = (time.perf_counter() - began) * 1000.0
    service.close()
    print(json.dumps({"import_s": round(_IMPORT_S, 2), "open_ms": round(open_ms, 1), "first_search_ms": round(first_ms, 2),
                      "first_search_stages": first.trace.timings(), "second_search_ms": round(second_ms, 2)}))


def cold(size: int, runs: int) -> list[dict]:
    out = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-m", "benchmarks.search_bench", "--probe", str(store_path(size))],
                              capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parent.parent)
        out.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return out


def markdown(results: dict) -> str:
    show = ["query_embedding", "dense", "lexical", "entity", "fusion", "freshness", "gate", "collapse", "budget", "explain",
            "log_write", "hard_filter"]
    header = ["records", "readable", "warm p50", "warm p95", "warm mean", "p50 without embedding"] + [f"{s} p50" for s in show] + [
        "cands dense/lex/ent/fused", "empty", "cold open", "cold 1st search"]
    rows = []
    for run in results["runs"]:
        w = run["warm"]
        c = run["cold"]
        cands = "/".join(str(w["candidates_mean"][k]) for k in ("dense", "lexical", "entity", "fused"))
        rows.append([run["records"], run["build"].get("readable_by_principal"), w["total_ms"]["p50"], w["total_ms"]["p95"],
                     w["total_ms"]["mean"], w["total_without_query_embedding_ms"]["p50"]] + [w["stages_ms"][s]["p50"] for s in show]
                    + [cands, w["empty_share"], f"{min(x['open_ms'] for x in c):.0f}" if c else "-",
                       f"{min(x['first_search_ms'] for x in c):.1f}" if c else "-"])
    return (
        f"memory_search, no reranker, no rewrite, {results['model']} ({results['model_version']}), "
        f"{results['machine']['cpus']} CPUs shared with other work (load average {results['load_average_before'][0]} before, "
        f"{results['load_average_after'][0]} after), torch threads {results['flags']['torch_threads_in_use']}, "
        f"{results['warm_searches']} warm searches per store; times in ms. "
        "Reproduce: `OPENBLAS_NUM_THREADS=1 MEMORY_EMBEDDER__TORCH_THREADS=1 .venv/bin/python -m benchmarks.search_bench`.\n\n" + markdown_table(header, rows)
    )


README = Path(__file__).resolve().parent / "README.md"
SECTION = "search-bench"
HEADING = "## memory_search latency (issue 3)"
TARGETS = {1000: ("p50", 12.0), 50000: ("p50", 25.0)}


def readme_section(results: dict, table: str) -> str:
    """The README section: method, the table, targets against measurements, and where time goes."""
    runs = {run["records"]: run for run in results["runs"]}
    lines = [
        "Warm: one process, model loaded, 20 warm-up searches, then "
        f"{results['warm_searches']} `MemoryService.search` calls cycling through {results['queries']} queries (one in ten "
        "off-topic, so the empty path with its lifecycle probe is included). Cold: a fresh process imports the library, opens "
        "the store (model load and vector-index rebuild = *cold open*) and runs its first search (*cold 1st search*; the best "
        f"of {len(next(iter(runs.values()))['cold']) if runs else 0} runs). Stores are synthetic and bulk-loaded through the "
        "store helpers with batch-embedded vectors (`benchmarks/search_corpus.py`); the searching principal can read 60% of "
        "the records, the other 40% belong to other users and are filtered out on every search.",
        "",
        table,
        "",
    ]
    checks = []
    for size, (stat, target) in TARGETS.items():
        if size in runs:
            got = runs[size]["warm"]["total_ms"][stat]
            checks.append(f"{stat} at {size:,} records: {got} ms (target {target} ms, {'met' if got <= target else 'missed'})")
    if 50000 in runs:
        got = runs[50000]["warm"]["total_ms"]["p95"]
        checks.append(f"p95 at 50,000 records: {got} ms (target 50 ms, {'met' if got <= 50 else 'missed'})")
    if checks:
        lines += ["Targets: " + "; ".join(checks) + ".", ""]
    lines += [
        "Threads: on this 2-core machine shared with other jobs, the benchmark runs the embedder and BLAS single-threaded "
        "(the flags in `results/search.json`). With the defaults (two torch threads) a one-query forward pass waits on "
        "whichever core is busy: during development, at a load average of about 3.5, the 1K store measured p50 123 ms and "
        "p95 525 ms with two threads against 25 ms and 40 ms with one. `MEMORY_EMBEDDER__TORCH_THREADS=1` is the setting "
        "to use on small shared machines.",
        "",
    ]
    if runs:
        largest = runs[max(runs)]["warm"]["stages_ms"]
        ranked = sorted(((v.get("p50", 0.0), k) for k, v in largest.items()), reverse=True)[:4]
        lines += ["Where the time goes at the largest store (stage p50): " + ", ".join(f"{k} {v} ms" for v, k in ranked) + ".", ""]
    return "\n".join(lines)


def replace_readme_section(body: str) -> None:
    """Replace (or append) the marked section of benchmarks/README.md."""
    start, end = f"<!-- {SECTION}:start -->", f"<!-- {SECTION}:end -->"
    text = README.read_text() if README.exists() else "# Benchmarks\n"
    block = f"{start}\n{body}\n{end}"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + f"\n\n{HEADING}\n\n{block}\n"
    README.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--cold-runs", type=int, default=2)
    parser.add_argument("--no-readme", action="store_true", help="leave benchmarks/README.md alone")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        probe(args.probe)
        return
    from memory_core.service import shared_embedder

    settings = load_settings()
    embedder = shared_embedder(settings.embedder)
    import torch

    results = {"benchmark": "memory_search", "model": embedder.model_name, "model_version": embedder.model_version,
               "flags": {"reranker_enabled": settings.retrieval.reranker_enabled, "rewrite_enabled": settings.retrieval.rewrite_enabled,
                         "embedder_torch_threads": settings.embedder.torch_threads, "torch_threads_in_use": torch.get_num_threads(),
                         "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS")},
               "load_average_before": [round(x, 2) for x in os.getloadavg()],
               "retrieval_settings": settings.retrieval.model_dump(mode="json"), "machine": machine(),
               "warm_searches": args.searches, "queries": len(QUERIES), "runs": []}
    for size in sorted(args.sizes):
        print(f"store of {size} records")
        build = ensure_store(size)
        run = {"records": size, "build": build, "warm": warm(size, args.searches), "cold": cold(size, args.cold_runs)}
        print(json.dumps({"records": size, "warm_total": run["warm"]["total_ms"], "cold": run["cold"]}))
        results["runs"].append(run)
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    search_corpus.OUT.mkdir(parents=True, exist_ok=True)
    (search_corpus.OUT / "search-bench.json").write_text(json.dumps(results, indent=2) + "\n")
    text = markdown(results)
    save("search", results, text)
    if not args.no_readme:
        replace_readme_section(readme_section(results, text))
    print(text)


if __name__ == "__main__":
    main()
