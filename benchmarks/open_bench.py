"""Opening a store: cold (every record's embedding read) against warm (the vector file), at 50K and 1M.

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python -m benchmarks.open_bench [--sizes 50000 1000000] [--runs 3]

Stores: the search benchmark's (``benchmarks/out/search-{size}.sqlite``: 50K built by
``search_bench``, 1M by ``scale_bench``; built here if missing). Each measurement is a fresh
process that imports the library, loads the packaged MiniLM (ONNX), opens the store and runs one
search as the benchmark principal; *ready to search* is model load + open + that first search (the
Python import is reported beside it). Modes, in this order per size:

* **cold**: ``<store>.vectors`` removed first, so the open reads every record's embedding (as before
  issue 31); the open then writes the file on its own thread, and the process reports when that
  write finished;
* **warm**: the file just written is read back (checksum, anchor and sample checks included);
* **warm, file evicted**: the same after ``posix_fadvise(DONTNEED)`` on the store's files and the
  vector file, so their pages come from the disk, not the page cache (only these files' clean
  pages are dropped; nothing else on the shared machine is touched). The cold mode is run the same
  way once (*cold, evicted*);
* **stale**: on a copy of the store and its file (``benchmarks/out/open-stale-*``, removed after),
  ``--stale-writes`` records are written through ``memory_write`` first; the open reads the file
  and applies the change feed since.

Same-run reference: the cold open of the same store in the same run (warm / cold ratio), and the
bare read of the vector file's bytes (``readinto``, no checks) in the warm process. With the 1M
store the faiss IVF index is loaded from ``<store>.ivf`` on a background thread; its ready time is
reported. Writes benchmarks/out/open_bench.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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

from . import scale_bench, search_bench, search_corpus  # noqa: E402
from .stats import load_average, machine, markdown_table, rss_mb, save, summary  # noqa: E402

CLOCK = "2026-03-05T10:00:00Z"
OUT = Path(__file__).resolve().parent / "out"


def _evict(path: Path) -> None:
    """Drop this file's clean pages from the page cache (no effect on any other file)."""
    for name in (path, Path(f"{path}-wal"), Path(f"{path}.vectors"), Path(f"{path}.ivf")):
        if name.exists():
            fd = os.open(name, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def _bare_read_s(path: Path) -> float | None:
    if not path.exists():
        return None
    import numpy as np

    buffer = np.empty(min(path.stat().st_size, 64 << 20), dtype=np.uint8)
    began = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        while f.readinto(memoryview(buffer)):
            pass
    return round(time.perf_counter() - began, 3)


def probe(path: str, mode: str) -> dict:
    """One fresh process: model load, open, first search; how the vector file was used."""
    from memory_core.service import shared_embedder

    store = Path(path)
    vectors = Path(f"{path}.vectors")
    if mode.startswith("cold"):
        vectors.unlink(missing_ok=True)
    if mode.endswith("evicted"):
        _evict(store)
    load_before = os.getloadavg()[0]
    settings = load_settings(retrieval={"query_cache_size": 0})
    began = time.perf_counter()
    embedder = shared_embedder(settings.embedder)
    model_s = time.perf_counter() - began
    began = time.perf_counter()
    service = MemoryService.open(store, settings, clock=FixedClock(CLOCK), embedder=embedder)
    open_s = time.perf_counter() - began
    began = time.perf_counter()
    first = service.search(agent_id="bench", user_id="u0", query=search_corpus.queries(1)[0])
    first_s = time.perf_counter() - began
    keeper = service.index.keeper
    out = {"mode": mode, "import_s": round(_IMPORT_S, 2), "model_load_s": round(model_s, 3), "open_s": round(open_s, 3),
           "first_search_ms": round(first_s * 1000, 1), "ready_s": round(model_s + open_s + first_s, 3),
           "first_search_results": len(first.results), "first_search_stages": first.trace.work_timings(),
           "vectors": service.index.count(),
           "vector_file": dict(keeper.last_load) if keeper else None, "load_average": [round(load_before, 2)]}
    backend = service.index.backend
    if hasattr(backend, "wait_until_built"):
        backend.wait_until_built()
        out["ivf_ready_s_after_open_began"] = round(time.perf_counter() - began + open_s, 2)
        out["ivf"] = dict(getattr(backend, "build_info", {}))
    began = time.perf_counter()
    if keeper is not None:
        keeper.wait()
        out["file_write"] = dict(keeper.file.last_event)
        out["file_written_s_after_first_search"] = round(time.perf_counter() - began, 2)
    if mode.startswith("warm"):
        out["bare_read_s"] = _bare_read_s(vectors)
    out["vector_file_bytes"] = vectors.stat().st_size if vectors.exists() else None
    out.update(rss_mb())
    out["load_average"].append(round(os.getloadavg()[0], 2))
    service.close()
    return out


def _run(path: Path, mode: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "benchmarks.open_bench", "--probe", str(path), mode], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent.parent)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def stale_copy(path: Path, writes: int) -> Path:
    """A copy of the store and its vector file with ``writes`` records written since the file."""
    copy = OUT / f"open-stale-{path.name}"
    for suffix in ("", ".vectors", ".ivf"):
        if Path(f"{path}{suffix}").exists():
            shutil.copy(f"{path}{suffix}", f"{copy}{suffix}")
    settings = load_settings(retrieval={"vector_file": False})  # leave the copied file as it was
    with MemoryService.open(copy, settings, clock=FixedClock(CLOCK)) as service:
        service.grant("bench-writer", "user:w0", read=True, write=True, actor="bench")
        session = service.start_session(agent_id="bench-writer", user_id="w0")
        for i in range(writes):
            made = session.call_tool("memory_write", {"type": "episodic", "content": f"Open benchmark note {i}: "
                                                      f"ticket OB-{i} moved to review."})
            assert made["ok"], made
    return copy


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[50_000, 1_000_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--stale-writes", type=int, default=1000)
    parser.add_argument("--probe", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(probe(*args.probe)))
        return
    data = {"machine": machine(), "load_average_before": load_average(), "runs": args.runs, "sizes": {}}
    for size in args.sizes:
        if size in scale_bench.REAL_VECTORS:
            scale_bench.ensure_store(size)
        else:
            search_bench.ensure_store(size)
        path = search_bench.store_path(size)
        entry: dict = {"cold": [], "warm": [], "warm, evicted": [], "cold, evicted": [], "stale": []}
        for _ in range(args.runs):
            entry["cold"].append(_run(path, "cold"))  # writes the file the warm runs read
            entry["warm"].append(_run(path, "warm"))
            entry["warm, evicted"].append(_run(path, "warm, evicted"))
            print(json.dumps({"records": size, **{k: v[-1]["ready_s"] for k, v in entry.items() if v}}), flush=True)
        entry["cold, evicted"].append(_run(path, "cold, evicted"))
        copy = stale_copy(path, args.stale_writes)
        try:
            entry["stale"].append(_run(copy, "warm"))
        finally:
            for suffix in ("", "-wal", "-shm", ".vectors", ".ivf"):
                Path(f"{copy}{suffix}").unlink(missing_ok=True)
        data["sizes"][str(size)] = entry
    data["load_average_after"] = load_average()
    text = render(data)
    save("open_bench", data, text, directory=OUT)
    print(text)


def render(data: dict) -> str:
    rows = []
    for size, entry in data["sizes"].items():
        cold = summary([r["ready_s"] for r in entry["cold"]])
        for mode, runs in entry.items():
            if not runs:
                continue
            ready = summary([r["ready_s"] for r in runs])
            last = runs[-1]
            how = last.get("vector_file") or {}
            used = ("read, " + f"{how.get('read_s')} s, {how.get('changes_since')} changes applied") if how.get("used") else \
                f"not used ({how.get('why', '-')})"
            rows.append([f"{int(size):,}", mode, len(runs), ready["p50"], ready["max"], summary([r["open_s"] for r in runs])["p50"],
                         summary([r["model_load_s"] for r in runs])["p50"], summary([r["first_search_ms"] for r in runs])["p50"],
                         round(ready["p50"] / cold["p50"], 3) if cold.get("p50") else "-", used, last.get("bare_read_s", "-"),
                         last.get("file_write", {}).get("write_s", "-") if mode.startswith("cold") else "-",
                         last.get("ivf_ready_s_after_open_began", "-"), last.get("import_s"),
                         f"{last['load_average'][0]} / {last['load_average'][1]}", last.get("rss_mb")])
    header = ["records", "open", "runs", "ready to search s (p50)", "max", "open s", "model load s", "first search ms",
              "ready / cold ready (same run)", "vector file", "bare read of the file s", "file write s (background)",
              "IVF ready s after open began", "import s", "load (1 min) before / after", "RSS MB"]
    return (f"Open and first search in a fresh process (load {data['load_average_before']} → {data['load_average_after']}); "
            "Reproduce: `OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python -m benchmarks.open_bench`.\n\n" + markdown_table(header, rows))


if __name__ == "__main__":
    main()
