"""Bulk import: N records through ``MemoryService.write_many`` against N single writes, same run.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.bulk_import [--records 10000] [--batch-size 500]

Both sides write the same synthetic records (benchmarks/corpus.py: semantic, episodic and
procedural agent inferences in one user's scope) into a fresh store with the packaged embedder,
through the full write path (permission, duplicate search, contradiction check, entity
resolution, write log, events, index). The single writes are the reference: the ratio of their
wall time to write_many's is the speed-up, measured under the same machine load.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from memory_core import FixedClock, MemoryService, load_settings  # noqa: E402
from memory_core.ingest.write_types import WriteRequest  # noqa: E402
from memory_core.policy.scopes import Scope  # noqa: E402

from .corpus import OUT, synthetic_texts  # noqa: E402
from .stats import load_average, machine, markdown_table, save  # noqa: E402


def requests(count: int) -> list[WriteRequest]:
    return [WriteRequest(type=kind, content=text, scope=Scope("user", "user0"), source_kind="agent_inference", agent_id="bench",
                         user_id="user0", actor="bench", attribute=attribute)
            for kind, text, attribute in synthetic_texts(count, seed=31)]


def fresh(name: str, embedder) -> MemoryService:
    path = OUT / f"bulk-{name}.sqlite"
    OUT.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm", ".vectors", ".ivf"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=embedder)
    service.grant("bench", "user:user0", read=True, write=True, actor="bench")
    return service


def timed(label: str, work) -> dict:
    load_before = load_average()
    began = time.perf_counter()
    outcomes = work()
    seconds = time.perf_counter() - began
    print(f"  {label}: {seconds:.1f} s")
    return {"seconds": round(seconds, 2), "load_average": [load_before[0], load_average()[0]], "outcomes": outcomes}


def count(outcomes) -> dict:
    out: dict[str, int] = {}
    for name in outcomes:
        out[name] = out.get(name, 0) + 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--batch-size", type=int, default=500)
    args = parser.parse_args()
    from memory_core.service import shared_embedder

    embedder = shared_embedder(load_settings().embedder)
    embedder.embed(["warm up the model"])
    bulk, single = fresh("many", embedder), fresh("single", embedder)
    try:
        access_bulk, access_single = bulk.access("bench", "user0"), single.access("bench", "user0")

        def many():
            done = bulk.write_many(requests(args.records), access_bulk, batch_size=args.batch_size,
                                   progress=lambda d, t: print(f"\r  write_many {d}/{t}", end="", flush=True) if d % 500 == 0 else None)
            print()
            return count(r.outcome.outcome if r.ok else "refused" for r in done)

        def one_by_one():
            out = []
            for n, req in enumerate(requests(args.records), 1):
                out.append(single.write(req, access_single).outcome)
                if n % 500 == 0:
                    print(f"\r  single writes {n}/{args.records}", end="", flush=True)
            print()
            return count(out)

        result_many = timed("write_many", many)
        result_single = timed("single writes", one_by_one)
        records = [bulk.stats()["records"], single.stats()["records"]]
    finally:
        bulk.close()
        single.close()
    ratio = round(result_single["seconds"] / result_many["seconds"], 2)
    results = {"benchmark": "bulk_import", "records": args.records, "batch_size": args.batch_size, "model": embedder.model_name,
               "runtime": getattr(embedder, "runtime", "torch"), "machine": machine(), "write_many": result_many,
               "single_writes": result_single, "records_after": records, "speedup": ratio}
    header = ["path", "records", "seconds", "records/s", "outcomes", "load (1 min) before/after"]
    rows = [[name, args.records, r["seconds"], round(args.records / r["seconds"], 1), r["outcomes"],
             f"{r['load_average'][0]} / {r['load_average'][1]}"]
            for name, r in (("write_many (batch %d)" % args.batch_size, result_many), ("single writes (reference)", result_single))]
    markdown = (f"Bulk import, {results['model']} on {results['runtime']}, {results['machine']['cpus']} CPUs shared with other "
                f"work. write_many is **{ratio}x** faster than single writes in the same run. Reproduce: "
                "`OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.bulk_import`.\n\n" + markdown_table(header, rows))
    save("bulk_import", results, markdown)
    print(json.dumps(results, indent=2))
    print(markdown)


if __name__ == "__main__":
    main()
