"""Search and write latency of two source trees on the same store, measured in alternating rounds.

    .venv/bin/python -m benchmarks.tree_compare --tree-a /work/main --tree-b . [--size 1000] [--searches 200]
                                                [--writes 60] [--rounds 3]

For a refactor that must not slow the hot paths: each round runs one fresh process per tree
(A, then B, then the order flips the next round, so load drifts hit both alike). A process puts its
tree first on ``sys.path``, opens a copy of the same bulk-built store (benchmarks/search_corpus.py)
with the packaged MiniLM embedder, warms up with 20 searches, then times ``--searches`` calls of
``MemoryService.search`` and ``--writes`` ``memory_write`` tool calls. Only the public API is used,
so any two trees with the same schema can be compared. Tree A is the reference: the report gives
B/A ratios of the medians, with ``/proc/loadavg`` before and after. Writes
benchmarks/out/tree-compare.{json,md}; nothing committed is touched.
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
CORPUS = "tree-compare-1"


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def probe(store: str, searches: int, writes: int, queries_file: str) -> None:
    """One measuring process (memory_core comes from PYTHONPATH); prints JSON."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import memory_core
    from memory_core import FixedClock, MemoryService, load_settings

    queries = json.loads(Path(queries_file).read_text())
    service = MemoryService.open(store, load_settings(), clock=FixedClock(CLOCK))
    try:
        for query in queries[:20]:
            service.search(agent_id="bench", user_id="u0", query=query)
        search_ms, search_no_model_ms = [], []
        for i in range(searches):
            began = time.perf_counter()
            response = service.search(agent_id="bench", user_id="u0", query=queries[i % len(queries)])
            search_ms.append((time.perf_counter() - began) * 1000.0)
            trace = response.trace  # (older trees have no work_timings: their embedding always ran in line)
            waited = trace.work_timings().get("vector_wait", 0.0) if hasattr(trace, "work_timings") else 0.0
            search_no_model_ms.append(search_ms[-1] - trace.timings().get("query_embedding", 0.0) - waited)
        service.grant("bench", "user:u0", read=True, write=True, actor="bench")
        session = service.start_session(agent_id="bench", user_id="u0")
        write_ms = []
        for i in range(writes):
            began = time.perf_counter()
            result = session.call_tool("memory_write", {"type": "semantic", "attribute": f"bench_fact_{i}",
                                                        "content": f"The user keeps benchmark note number {i} about topic {i % 7}."})
            write_ms.append((time.perf_counter() - began) * 1000.0)
            assert result["ok"], result
    finally:
        service.close()
    print(json.dumps({"memory_core": str(Path(memory_core.__file__).parent), "search_ms": search_ms,
                      "search_without_query_embedding_ms": search_no_model_ms, "write_ms": write_ms}))


def ensure_store(size: int) -> Path:
    """The bulk-built store of ``size`` records (built with this process's memory_core)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from memory_core import FixedClock, MemoryService, load_settings

    from . import search_corpus

    path = OUT / f"tree-compare-{size}.sqlite"
    if path.exists():
        with MemoryService.open(path, load_settings(), clock=FixedClock(CLOCK)) as service:
            if service.store.get_meta("bench_corpus") == CORPUS:
                return path
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    OUT.mkdir(parents=True, exist_ok=True)
    with MemoryService.open(path, load_settings(), clock=FixedClock(CLOCK)) as service:
        search_corpus.build(service, size)
        service.store.set_meta("bench_corpus", CORPUS)
    return path


def run_tree(tree: Path, store: Path, searches: int, writes: int) -> dict:
    from . import search_corpus

    from .tree_probe import copy_store, run_probe  # (the parent only: a probe runs this file alone)

    with tempfile.TemporaryDirectory() as tmp:
        copy = copy_store(store, Path(tmp), side_files=False)
        queries = Path(tmp) / "queries.json"
        queries.write_text(json.dumps(search_corpus.queries(60)))
        return run_probe(__file__, tree, [str(copy), str(searches), str(writes), str(queries)], Path(tmp))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree-a", help="reference source tree (e.g. a checkout of main)")
    parser.add_argument("--tree-b", help="source tree to compare")
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--writes", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--probe", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        probe(args.probe[0], int(args.probe[1]), int(args.probe[2]), args.probe[3])
        return
    if not (args.tree_a and args.tree_b):
        parser.error("--tree-a and --tree-b are required")
    trees = {"A": Path(args.tree_a).resolve(), "B": Path(args.tree_b).resolve()}
    store = ensure_store(args.size)
    load_before = _load()
    samples: dict[str, dict[str, list[float]]] = {k: {"search_ms": [], "search_without_query_embedding_ms": [], "write_ms": []}
                                                  for k in trees}
    for round_no in range(args.rounds):
        for key in (("A", "B") if round_no % 2 == 0 else ("B", "A")):
            result = run_tree(trees[key], store, args.searches, args.writes)
            assert Path(result["memory_core"]).parent == trees[key], result["memory_core"]
            for metric in samples[key]:
                samples[key][metric] += result[metric]
            print(f"round {round_no + 1} tree {key}: search p50 {statistics.median(result['search_ms']):.2f} ms, "
                  f"write p50 {statistics.median(result['write_ms']):.2f} ms", flush=True)
    load_after = _load()
    rows, report = [], {"trees": {k: str(v) for k, v in trees.items()}, "size": args.size, "rounds": args.rounds,
                        "loadavg_before": load_before, "loadavg_after": load_after, "metrics": {}}
    for metric in ("search_ms", "search_without_query_embedding_ms", "write_ms"):
        a, b = statistics.median(samples["A"][metric]), statistics.median(samples["B"][metric])
        report["metrics"][metric] = {"A_p50": round(a, 3), "B_p50": round(b, 3), "B_over_A": round(b / a, 3), "n": len(samples["A"][metric])}
        rows.append(f"| {metric} | {a:.2f} | {b:.2f} | {b / a:.3f} |")
    markdown = "\n".join([
        f"Tree A (reference): {trees['A']}  \nTree B: {trees['B']}  \n{args.size} records, {args.rounds} rounds, "
        f"load {load_before} → {load_after}", "", "| metric (median ms) | A | B | B/A |", "|---|---|---|---|", *rows])
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "tree-compare.json").write_text(json.dumps(report, indent=2) + "\n")
    (OUT / "tree-compare.md").write_text(markdown + "\n")
    print(markdown)


if __name__ == "__main__":
    main()
