"""Search latency of two source trees at several store sizes, in alternating same-run rounds.

    .venv/bin/python -m benchmarks.pipeline_ab --tree-a ../arch-retrieve-base --tree-b . \
        [--sizes 1000 50000] [--searches 300] [--rounds 4]

For a change to the search pipeline that must not slow it (issue 28: declared stage hand-offs):
each round runs one fresh process per tree (A then B, the order flipped every round, so a change
in the machine's load hits both alike). A process puts its tree first on ``sys.path``, opens a copy
of the same bulk-built store (benchmarks/search_corpus.py, built by benchmarks/tree_compare.py's
``ensure_store``) with the packaged MiniLM, and times ``MemoryService.search`` over the 60
benchmark queries (one in ten off-topic, so the empty path and its lifecycle probe are included)
in two modes: **cached** (the query-vector cache on, as shipped: after the warm-up every query
vector comes from the cache, so this times the pipeline itself) and **embedding** (the cache off:
every search embeds its query, as benchmarks/search_bench.py measures). Only the public API is
used. Tree A is the reference: the report gives B/A ratios of the medians per size and mode, with
``/proc/loadavg`` before and after every process. Writes benchmarks/out/pipeline-ab.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
CLOCK = "2026-03-05T10:00:00Z"
MODES = {"cached": 1024, "embedding": 0}  # retrieval.query_cache_size per mode


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def probe(store: str, searches: int, queries_file: str) -> None:
    """One measuring process (memory_core comes from PYTHONPATH); prints one JSON line."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import memory_core
    from memory_core import FixedClock, MemoryService, load_settings

    queries = json.loads(Path(queries_file).read_text())
    out: dict = {"memory_core": str(Path(memory_core.__file__).parent), "load_before": _load()}
    for mode, cache in MODES.items():
        settings = load_settings(retrieval={"query_cache_size": cache})
        with MemoryService.open(store, settings, clock=FixedClock(CLOCK)) as service:
            for query in queries[:20]:
                service.search(agent_id="bench", user_id="u0", query=query)
            total, pipeline = [], []
            for i in range(searches):
                began = time.perf_counter()
                response = service.search(agent_id="bench", user_id="u0", query=queries[i % len(queries)])
                total.append((time.perf_counter() - began) * 1000.0)
                work = response.trace.work_timings()
                pipeline.append(total[-1] - work.get("query_embedding", 0.0) - work.get("vector_wait", 0.0)
                                if mode == "embedding" else total[-1])
        out[mode] = {"search_ms": total, "without_embedding_ms": pipeline}
    out["load_after"] = _load()
    print(json.dumps(out))


def run_tree(tree: Path, store: Path, searches: int, queries: list[str]) -> dict:
    from .tree_probe import copy_store, run_probe  # (the parent only: a probe runs this file alone)

    with tempfile.TemporaryDirectory() as tmp:
        copy = copy_store(store, Path(tmp), side_files=True)
        queries_file = Path(tmp) / "queries.json"
        queries_file.write_text(json.dumps(queries))
        return run_probe(__file__, tree, [str(copy), str(searches), str(queries_file)], Path(tmp))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree-a", help="reference source tree (a checkout of main)")
    parser.add_argument("--tree-b", help="source tree to compare")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 50000])
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--probe", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        probe(args.probe[0], int(args.probe[1]), args.probe[2])
        return
    if not (args.tree_a and args.tree_b):
        parser.error("--tree-a and --tree-b are required")
    from . import search_corpus
    from .tree_compare import ensure_store

    trees = {"A": Path(args.tree_a).resolve(), "B": Path(args.tree_b).resolve()}
    queries = search_corpus.queries(60)
    report: dict = {"trees": {k: str(v) for k, v in trees.items()}, "searches": args.searches, "rounds": args.rounds,
                    "loadavg_before": _load(), "sizes": {}}
    rows = []
    for size in args.sizes:
        store = ensure_store(size)
        samples = {k: {m: {"search_ms": [], "without_embedding_ms": []} for m in MODES} for k in trees}
        loads = []
        for round_no in range(args.rounds):
            for key in (("A", "B") if round_no % 2 == 0 else ("B", "A")):
                result = run_tree(trees[key], store, args.searches, queries)
                assert Path(result["memory_core"]).parent == trees[key], result["memory_core"]
                loads.append({"tree": key, "round": round_no + 1, "before": result["load_before"], "after": result["load_after"]})
                for mode in MODES:
                    for metric in ("search_ms", "without_embedding_ms"):
                        samples[key][mode][metric] += result[mode][metric]
                print(f"{size} records, round {round_no + 1} tree {key}: cached p50 "
                      f"{statistics.median(result['cached']['search_ms']):.2f} ms, embedding p50 "
                      f"{statistics.median(result['embedding']['search_ms']):.2f} ms (load {result['load_before']})", flush=True)
        metrics = {}
        for mode in MODES:
            for metric in ("search_ms", "without_embedding_ms"):
                if mode == "cached" and metric == "without_embedding_ms":
                    continue
                a, b = (statistics.median(samples[k][mode][metric]) for k in ("A", "B"))
                metrics[f"{mode}/{metric}"] = {"A_p50": round(a, 3), "B_p50": round(b, 3), "B_over_A": round(b / a, 4),
                                               "n": len(samples["A"][mode][metric])}
                rows.append(f"| {size:,} | {mode} | {metric} | {a:.2f} | {b:.2f} | {b / a:.3f} |")
        report["sizes"][str(size)] = {"metrics": metrics, "loadavg": loads}
    report["loadavg_after"] = _load()
    markdown = "\n".join([
        f"Tree A (reference): {trees['A']}  \nTree B: {trees['B']}  \n{args.rounds} rounds of {args.searches} searches per mode, "
        f"load {report['loadavg_before']} → {report['loadavg_after']}", "",
        "| records | mode | metric (median ms) | A | B | B/A |", "|---|---|---|---|---|---|", *rows])
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "pipeline-ab.json").write_text(json.dumps(report, indent=2) + "\n")
    (OUT / "pipeline-ab.md").write_text(markdown + "\n")
    print(markdown)


if __name__ == "__main__":
    main()
