"""memory_search through the MCP SDK's client, warm, on the 1K-record search store: stdio and
streamable HTTP against in-process calls in the same run, then 8 concurrent HTTP clients.

    .venv/bin/python -m benchmarks.mcp_latency [--searches 300] [--concurrent 8] [--per-client 40]

The store is the search benchmark's 1K store (benchmarks/search_corpus.py), copied to a scratch
file so the sessions and keys of this run stay out of it. The principal is the search benchmark's
(agent ``bench`` for user ``u0``); the query-vector cache is off everywhere (every search embeds its
query), as in benchmarks/search_bench.py. In-process: ``Session.call_tool("memory_search", ...)``,
the call the MCP server makes for a client, timed in a block before and one after the MCP blocks
(their mean p50 is the reference). stdio: ``mcp.Client`` launching ``agent-memory mcp`` (protocol
2026-07-28, the SDK's default); HTTP: ``mcp.Client`` over streamable HTTP with a model key (the
server serves 2025-11-25 sessions). Each block has 20 warm-up searches; times are measured at the
client around ``call_tool``. Concurrency: ``--concurrent`` HTTP sessions in one client process,
each making ``--per-client`` searches at once with the others. Writes results/mcp.{json,md}.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["MEMORY_RETRIEVAL__QUERY_CACHE_SIZE"] = "0"  # every search embeds its query (servers inherit it)

import anyio  # noqa: E402

from memory_core import MemoryService, load_settings  # noqa: E402
from memory_core.mcp.keys import create_key  # noqa: E402

from . import search_corpus  # noqa: E402
from .search_bench import ensure_store, store_path  # noqa: E402
from .stats import load_average, machine, markdown_table, save, summary  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = search_corpus.OUT / "mcp-1000.sqlite"
TARGETS = {"stdio": 3.0, "http": 5.0}  # issue 25: p50 at most in-process p50 + this many ms


def _scratch_store() -> Path:
    ensure_store(1000)
    for suffix in ("", "-wal", "-shm"):
        Path(str(SCRATCH) + suffix).unlink(missing_ok=True)
    with MemoryService.open(store_path(1000), load_settings()) as service:
        service.snapshot(SCRATCH)  # a consistent copy (the WAL included)
    return SCRATCH


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def in_process(path: Path, calls: dict[str, list[dict]]) -> dict[str, list[float]]:
    out = {}
    with MemoryService.open(path, load_settings()) as service:
        session = service.start_session(agent_id="bench", user_id="u0")
        for tool, arguments in calls.items():
            for args in arguments[:20]:
                session.call_tool(tool, args)
            out[tool] = []
            for args in arguments[20:]:
                began = time.perf_counter()
                result = session.call_tool(tool, args)
                out[tool].append((time.perf_counter() - began) * 1000.0)
                assert result["ok"], result
        session.end()
    return out


async def _timed(client, calls: dict[str, list[dict]]) -> dict[str, list[float]]:
    out = {}
    for tool, arguments in calls.items():
        for args in arguments[:20]:
            await client.call_tool(tool, args)
        out[tool] = []
        for args in arguments[20:]:
            began = time.perf_counter()
            result = await client.call_tool(tool, args)
            out[tool].append((time.perf_counter() - began) * 1000.0)
            assert not result.is_error, result
    return out


def over_stdio(path: Path, queries: dict[str, list[dict]]) -> tuple[dict[str, list[float]], str]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT), env=_env(), args=[
        "-m", "memory_core.cli", "mcp", "--path", str(path), "--agent-id", "bench", "--user-id", "u0"])

    async def run():
        async with Client(params) as client:
            return await _timed(client, queries), client.protocol_version

    return anyio.run(run)


class _Server:
    def __init__(self, path: Path) -> None:
        import subprocess

        self.proc = subprocess.Popen([sys.executable, "-m", "memory_core.cli", "mcp", "--http", "--port", "0", "--path",
                                      str(path)], cwd=ROOT, env=_env(), stderr=subprocess.PIPE, text=True)
        for line in self.proc.stderr:
            if "agent-memory MCP on http://" in line:
                self.url = line.split(" on ", 1)[1].split()[0]
                break
        else:
            raise RuntimeError("the HTTP server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)


def _client(url: str, token: str):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return http, Client(streamable_http_client(url, http_client=http))


def over_http(url: str, token: str, queries: dict[str, list[dict]]) -> tuple[dict[str, list[float]], str]:
    async def run():
        http, client = _client(url, token)
        async with http, client:
            return await _timed(client, queries), client.protocol_version

    return anyio.run(run)


def concurrent_http(url: str, token: str, clients: int, per_client: int) -> dict:
    """Throughput and latency of ``clients`` HTTP sessions searching at once."""
    queries = search_corpus.queries(clients * per_client + 20)
    times: list[float] = []

    async def one(i: int, ready: anyio.Event, go: anyio.Event, counter: list[int]):
        http, client = _client(url, token)
        async with http, client:
            await client.call_tool("memory_search", {"query": queries[i]})  # warm this session
            counter[0] += 1
            if counter[0] == clients:
                ready.set()
            await go.wait()
            for query in queries[20 + i * per_client: 20 + (i + 1) * per_client]:
                began = time.perf_counter()
                result = await client.call_tool("memory_search", {"query": query})
                times.append((time.perf_counter() - began) * 1000.0)
                assert not result.is_error, result

    async def run():
        ready, go, counter = anyio.Event(), anyio.Event(), [0]
        async with anyio.create_task_group() as group:
            for i in range(clients):
                group.start_soon(one, i, ready, go, counter)
            await ready.wait()
            began = time.perf_counter()
            go.set()
        return time.perf_counter() - began

    elapsed = anyio.run(run)
    return {"clients": clients, "searches": len(times), "elapsed_s": round(elapsed, 2),
            "throughput_per_s": round(len(times) / elapsed, 1), "latency": summary(times)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--concurrent", type=int, default=8)
    parser.add_argument("--per-client", type=int, default=40)
    args = parser.parse_args(argv)
    path = _scratch_store()
    with MemoryService.open(path, load_settings()) as service:
        _, token = create_key(service, kind="model", agent_id="bench", user_id="u0", actor="benchmark")
        record_id = service.store.scalar("SELECT id FROM records WHERE scope_id = 'u0' ORDER BY seq LIMIT 1")
    # memory_get (a primary-key read) shows what the transport itself costs; memory_search is the measure
    calls = {"memory_search": [{"query": q} for q in search_corpus.queries(args.searches + 20)],
             "memory_get": [{"record_id": record_id}] * (args.searches + 20)}
    raw, loads = {}, {"start": load_average()}
    raw["in_process_before"] = in_process(path, calls)
    loads["after in-process"] = load_average()
    raw["stdio"], stdio_version = over_stdio(path, calls)
    loads["after stdio"] = load_average()
    server = _Server(path)
    try:
        raw["http"], http_version = over_http(server.url, token, calls)
        loads["after http"] = load_average()
        concurrency = concurrent_http(server.url, token, args.concurrent, args.per_client)
        loads["after concurrency"] = load_average()
    finally:
        server.stop()
    raw["in_process_after"] = in_process(path, calls)
    loads["end"] = load_average()
    stats = {tool: {name: summary(values[tool]) for name, values in raw.items()} for tool in calls}
    checks, reference = {}, {}
    for tool in calls:
        reference[tool] = round((stats[tool]["in_process_before"]["p50"] + stats[tool]["in_process_after"]["p50"]) / 2, 2)
        for name, budget in TARGETS.items():
            over = round(stats[tool][name]["p50"] - reference[tool], 2)
            checks.setdefault(tool, {})[name] = {"p50": stats[tool][name]["p50"], "over_in_process_ms": over,
                                                 "budget_ms": budget, "met": over <= budget,
                                                 "ratio": round(stats[tool][name]["p50"] / reference[tool], 3)}
    data = {"machine": machine(), "load_average": loads, "records": 1000, "calls_per_block": args.searches,
            "protocol": {"stdio": stdio_version, "http": http_version}, "in_process_reference_p50": reference,
            "stats": stats, "checks": checks, "concurrency": concurrency}
    rows = []
    for tool in calls:
        st, ck = stats[tool], checks[tool]
        rows.append([f"`{tool}`", "in-process `Session.call_tool` (before)", *_cells(st["in_process_before"]), "", ""])
        rows.append([f"`{tool}`", "in-process `Session.call_tool` (after)", *_cells(st["in_process_after"]), "", ""])
        for name, label in (("stdio", f"MCP stdio, SDK client ({stdio_version})"),
                            ("http", f"MCP HTTP, SDK client ({http_version})")):
            c = ck[name]
            budget = f" (budget +{c['budget_ms']:g}: {'met' if c['met'] else 'NOT met'})" if tool == "memory_search" else ""
            rows.append([f"`{tool}`", label, *_cells(st[name]), f"+{c['over_in_process_ms']}{budget}", c["ratio"]])
    lat = concurrency["latency"]
    load_text = ", ".join(f"{k} {v[0]}" for k, v in loads.items())
    markdown = "\n".join([
        f"MCP tool calls on 1,000 records (the search benchmark's store), warm, query-vector cache off, "
        f"{args.searches} calls per tool and path, times at the client in ms; {machine()['cpus']} CPUs shared with other "
        f"work, 1-minute load average: {load_text}. Reproduce: `.venv/bin/python -m benchmarks.mcp_latency`.", "",
        markdown_table(["tool", "path", "n", "p50", "p95", "mean", "p50 over in-process (ms)", "p50 / in-process p50"], rows), "",
        f"{concurrency['clients']} concurrent HTTP sessions (one client process), {concurrency['searches']} memory_search "
        f"calls: {concurrency['throughput_per_s']} searches/s over {concurrency['elapsed_s']} s; latency p50 {lat['p50']} ms, "
        f"p95 {lat['p95']} ms, max {lat['max']} ms.",
    ])
    save("mcp", data, markdown)
    print(markdown)
    return 0


def _cells(s: dict) -> list:
    return [s["n"], s["p50"], s["p95"], s["mean"]]


if __name__ == "__main__":
    sys.exit(main())
