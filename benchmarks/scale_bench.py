"""Search past 200K records: the exact index at 200K, the approximate (faiss IVF) index at 1M.

    .venv/bin/python -m benchmarks.scale_bench [--sizes 200000 1000000] [--searches 200]

Stores: the search benchmark's synthetic multi-user corpus (``benchmarks/search_corpus.py``). The
200K store is embedded for real (ONNX Runtime, batched); the 1M store embeds its first 50K records
for real and gives the other 950K synthetic vectors, noisy copies of those real ones
(``benchmarks/synthetic_vectors.py`` says how), because embedding a million texts does not fit a
session on this machine. Texts, scopes, entities and FTS rows are real for every record.

Per size, in a fresh process each: open the store (vector-index rebuild, plus the IVF build where
it applies) with its resident memory; then warm searches (unique queries, so the query-vector cache
never hits) as the benchmark principal, who can read 60% of the records, once with the exact index
and once with the approximate one; per stage p50; recall@10 of the approximate dense top-10
against the exact dense top-10 for the same queries and masks; and a check that no dense hit of
either ever falls outside the principal's readable scopes. Writes benchmarks/results/scale.{json,md}.
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


if __name__ == "__main__" and sys.argv[1:2] == ["--build-only"]:
    for n in map(int, sys.argv[2:]):
        print(n, ensure_store(n), flush=True)
    sys.exit(0)
