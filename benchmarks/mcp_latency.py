"""memory_search through the MCP SDK's client, warm, on the 1K-record search store: stdio and
streamable HTTP against in-process calls, interleaved call by call in one run, then 8 concurrent
HTTP clients.

    .venv/bin/python -m benchmarks.mcp_latency [--searches 300] [--concurrent 8] [--per-client 40]
                                               [--baseline CHECKOUT] [--no-floor]

The store is the search benchmark's 1K store (benchmarks/search_corpus.py), copied to a scratch
file so the sessions and keys of this run stay out of it. The principal is the search benchmark's
(agent ``bench`` for user ``u0``); the query-vector cache is off everywhere (every search embeds its
query), as in benchmarks/search_bench.py.

What each path's time includes (all measured in this process around one call, in ms):

- in-process: ``McpMemorySession.call`` on a memory session opened as the server opens one: the
  call the server makes for a client, with the same arguments, returning the result dict. Not
  included: rendering the result as text, which the server does and an in-process adapter does too
  (its cost is reported beside the table as ``text_ms``).
- stdio: ``mcp.Client.call_tool`` over ``agent-memory mcp`` launched by the SDK's stdio client
  (protocol 2026-07-28, the SDK's default): the client's request encoding, the pipe, the server's
  handling and the search, its result as structured content plus text, and the client's parsing
  and validation of the reply.
- HTTP: the same over streamable HTTP (``agent-memory mcp --http``, a model key; the server serves
  2025-11-25 sessions), the SDK's own ``create_mcp_http_client``.
- floor (on by default, ``--no-floor`` leaves it out): the same SDK client calling a bare
  ``mcp.server.MCPServer`` whose one tool returns a constant small dict (benchmarks/mcp_floor.py),
  launched as ours is, over stdio and over HTTP (the client pinned to the 2025-11-25 handshake, as
  our HTTP server serves). Its p50 is what the SDK and the transport cost with none of our code: the
  part of the budget that is not ours to spend. Floor rows call ``ping`` in every tool's rounds.

Every round makes one call on each path with the same arguments, the order rotating from round to
round, so a change in the machine's load reaches every path alike (the reason for interleaving:
the machine is shared, and separate blocks measured minutes apart differed by more than the
budget). Each path has 20 warm-up calls first. CPU columns: this process's CPU per call (for the
in-process path the whole search, its embedding thread included; for MCP paths the client's
work) and the server process's CPU per call (from /proc, Linux only). ``--baseline CHECKOUT`` adds
stdio and HTTP servers run from another checkout (e.g. main) to the same rounds, for a before/after
table in one run. Concurrency: ``--concurrent`` HTTP sessions in one client process, each making
``--per-client`` searches at once with the others. Writes results/mcp.{json,md}.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["MEMORY_RETRIEVAL__QUERY_CACHE_SIZE"] = "0"  # every search embeds its query (servers inherit it)

import anyio  # noqa: E402

from memory_core import MemoryService, load_settings  # noqa: E402
from memory_core.adapters.base import format_tool_result  # noqa: E402
from memory_core.mcp.keys import create_key  # noqa: E402
from memory_core.mcp.memory_session import SESSION_META_KEY, McpMemorySession, Principal  # noqa: E402

from . import search_corpus  # noqa: E402
from .search_bench import ensure_store, store_path  # noqa: E402
from .stats import load_average, machine, markdown_table, save, summary  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = search_corpus.OUT / "mcp-1000.sqlite"
TARGETS = {"stdio": 3.0, "http": 5.0}  # issue 25: p50 at most in-process p50 + this many ms
WARM = 20
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _scratch_store() -> Path:
    ensure_store(1000)
    for suffix in ("", "-wal", "-shm"):
        Path(str(SCRATCH) + suffix).unlink(missing_ok=True)
    with MemoryService.open(store_path(1000), load_settings()) as service:
        service.snapshot(SCRATCH)  # a consistent copy (the WAL included)
    return SCRATCH


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _process_cpu_s(pid: int | None) -> float | None:
    """User plus system CPU seconds of a process so far (None where /proc is not there)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, TypeError):
        return None
    return (int(fields[11]) + int(fields[12])) / TICK


def _switches(pid: int | None) -> int | None:
    """Context switches of a process so far, voluntary and not, all its threads (None without /proc)."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            for line in task.joinpath("status").read_text().splitlines():
                if "ctxt_switches:" in line:
                    total += int(line.split(":")[1])
    except (OSError, TypeError, ValueError):
        return None
    return total


def _children() -> set[int]:
    me, out = os.getpid(), set()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if int(entry.joinpath("stat").read_text().rsplit(")", 1)[1].split()[1]) == me:
                out.add(int(entry.name))
        except (OSError, ValueError, IndexError):
            pass
    return out


class _Path:
    """One way of making a tool call; ``call`` returns nothing and raises if the call failed."""

    name: str
    pid: int | None = None  # the server process, for its CPU time
    session_id: str | None = None  # the memory session serving the path (its search_log rows)

    async def call(self, tool: str, arguments: dict) -> None:
        raise NotImplementedError

    def after_call(self) -> None:
        """Work done after the clock stopped for a call (nothing, unless a path says otherwise)."""


class _InProcess(_Path):
    name = "in_process"

    def __init__(self, service) -> None:
        self.memory = McpMemorySession(service, Principal("bench", "u0"))
        self.session_id = self.memory.id
        self.text_ms: list[float] = []

    async def call(self, tool: str, arguments: dict) -> None:
        self.result = self.memory.call(tool, arguments)
        assert self.result["ok"], self.result

    def after_call(self) -> None:
        """The text a model would read, timed apart: the server renders it too, the reference does not."""
        began = time.perf_counter()
        format_tool_result(self.result)
        self.text_ms.append((time.perf_counter() - began) * 1000.0)


class _Mcp(_Path):
    def __init__(self, name: str, client, pid: int | None) -> None:
        self.name, self.client, self.pid = name, client, pid
        self.protocol = client.protocol_version

    async def call(self, tool: str, arguments: dict) -> None:
        result = await self.client.call_tool(tool, arguments)
        assert not result.is_error, result
        self.session_id = (result.meta or {}).get(SESSION_META_KEY, self.session_id)


async def _in_memory(stack, service) -> _Mcp:
    """The SDK's client and our server in this process, joined by memory streams: the protocol's work
    (models, JSON, tasks, the worker-thread hand-off) without a pipe, a socket or another process."""
    from mcp import Client

    from memory_core.mcp.protocol import anyio as _anyio, build_server

    memory = McpMemorySession(service, Principal("bench", "u0"))
    stack.callback(memory.end)
    server = build_server(memory, _anyio.CapacityLimiter(4))
    client = await stack.enter_async_context(Client(server))
    return _Mcp("sdk_in_memory", client, None)


async def _stdio(stack, name: str, tree: Path, path: Path) -> _Mcp:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, cwd=str(tree), env=_env(tree), args=[
        "-m", "memory_core.cli", "mcp", "--path", str(path), "--agent-id", "bench", "--user-id", "u0"])
    before = _children() if sys.platform == "linux" else set()
    client = await stack.enter_async_context(Client(params))
    started = _children() - before if sys.platform == "linux" else set()
    return _Mcp(name, client, started.pop() if len(started) == 1 else None)


class _Server:
    """``agent-memory mcp --http`` from ``tree`` on a free port."""

    def __init__(self, tree: Path, path: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "memory_core.cli", "mcp", "--http", "--port", "0", "--path",
                                      str(path)], cwd=tree, env=_env(tree), stderr=subprocess.PIPE, text=True)
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


async def _http(stack, name: str, server: _Server, token: str) -> _Mcp:
    http, client = _client(server.url, token)
    await stack.enter_async_context(http)
    await stack.enter_async_context(client)
    return _Mcp(name, client, server.proc.pid)


class _Floor(_Mcp):
    """The bare SDK server of benchmarks/mcp_floor.py: every call is its constant ``ping``."""

    async def call(self, tool: str, arguments: dict) -> None:
        result = await self.client.call_tool("ping", {})
        assert not result.is_error and result.structured_content == {"ok": True}, result


class _FloorServer(_Server):
    """``python -m benchmarks.mcp_floor http`` on a free port."""

    def __init__(self) -> None:  # noqa: D107 - the class docstring says it
        self.proc = subprocess.Popen([sys.executable, "-m", "benchmarks.mcp_floor", "http"], cwd=ROOT, env=_env(ROOT),
                                     stderr=subprocess.PIPE, text=True)
        for line in self.proc.stderr:
            if "floor MCP on http://" in line:
                self.url = line.split(" on ", 1)[1].split()[0]
                break
        else:
            raise RuntimeError("the floor's HTTP server did not start")


async def _floor_stdio(stack) -> _Floor:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT), env=_env(ROOT), args=["-m", "benchmarks.mcp_floor"])
    before = _children() if sys.platform == "linux" else set()
    client = await stack.enter_async_context(Client(params))
    started = _children() - before if sys.platform == "linux" else set()
    return _Floor("floor_stdio", client, started.pop() if len(started) == 1 else None)


async def _floor_http(stack, server: _FloorServer) -> _Floor:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = await stack.enter_async_context(create_mcp_http_client())
    # legacy: the 2025-11-25 handshake our HTTP server serves (left to itself the client would pick 2026-07-28)
    client = await stack.enter_async_context(Client(streamable_http_client(server.url, http_client=http), mode="legacy"))
    return _Floor("floor_http", client, server.proc.pid)


def _logged_ms(service, paths: list[_Path], after_seq: int, calls: int) -> dict[str, list[float]]:
    """Each path's searches as the service logged them (search_log.total_ms, in call order): the
    search's own time inside whichever process ran it. Rows written by another process may land a
    moment after its reply, so this waits (at most 30 s) until every path's rows are there."""
    deadline = time.monotonic() + 30.0
    while True:
        out = {p.name: [row["total_ms"] for row in service.store.query(
            "SELECT total_ms FROM search_log WHERE seq > ? AND session_id = ? ORDER BY seq", (after_seq, p.session_id))]
            for p in paths}
        if all(len(v) >= calls for v in out.values()) or time.monotonic() > deadline:
            return out
        time.sleep(0.2)


async def _rounds(service, paths: list[_Path], tool: str, arguments: list[dict]) -> dict[str, dict]:
    """Warm every path, then one call per path per round, rotating the order; times and CPU per path."""
    for args in arguments[:WARM]:
        for path in paths:
            await path.call(tool, args)
    after_seq = service.store.scalar("SELECT COALESCE(MAX(seq), 0) FROM search_log")
    times: dict[str, list[float]] = {p.name: [] for p in paths}
    here_cpu = dict.fromkeys(times, 0.0)
    server_before = {p.name: (_process_cpu_s(p.pid), _switches(p.pid)) for p in paths}
    for i, args in enumerate(arguments[WARM:]):
        for k in range(len(paths)):
            path = paths[(i + k) % len(paths)]
            cpu = time.process_time()
            began = time.perf_counter()
            await path.call(tool, args)
            times[path.name].append((time.perf_counter() - began) * 1000.0)
            here_cpu[path.name] += time.process_time() - cpu
            path.after_call()
    out = {}
    for path in paths:
        n = len(times[path.name])
        (cpu_before, cs_before), cpu_after, cs_after = server_before[path.name], _process_cpu_s(path.pid), _switches(path.pid)
        out[path.name] = {**summary(times[path.name]), "cpu_here_ms": round(here_cpu[path.name] / n * 1000.0, 2),
                          "cpu_server_ms": None if None in (cpu_before, cpu_after) else round((cpu_after - cpu_before) / n * 1000.0, 2),
                          "server_switches": None if None in (cs_before, cs_after) else round((cs_after - cs_before) / n, 1)}
    if tool == "memory_search":
        logging = [p for p in paths if p.session_id is not None]  # the floor's server has no memory session
        for name, logged in _logged_ms(service, logging, after_seq, len(arguments) - WARM).items():
            if len(logged) == len(times[name]):  # the nth row is the nth timed call (each path's calls are sequential)
                out[name]["search_logged"] = summary(logged)
                out[name]["outside_search"] = summary([t - s for t, s in zip(times[name], logged)])
    return out


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


def measure(path: Path, token: str, calls: dict[str, list[dict]], baseline: Path | None, servers: dict) -> tuple[dict, dict]:
    """Every tool's rounds over every path; returns (stats per tool and path, protocol per path)."""
    async def run():
        async with contextlib.AsyncExitStack() as stack:
            service = stack.enter_context(MemoryService.open(path, load_settings()))
            local = _InProcess(service)
            paths: list[_Path] = [local, await _in_memory(stack, service), await _stdio(stack, "stdio", ROOT, path),
                                  await _http(stack, "http", servers["http"], token)]
            if baseline is not None:
                paths += [await _stdio(stack, "stdio_before", baseline, path),
                          await _http(stack, "http_before", servers["http_before"], token)]
            if "floor_http" in servers:
                paths += [await _floor_stdio(stack), await _floor_http(stack, servers["floor_http"])]
            stats = {}
            for tool, arguments in calls.items():
                local.text_ms.clear()
                stats[tool] = await _rounds(service, paths, tool, arguments)
                stats[tool]["in_process"]["text_ms"] = summary(local.text_ms)
            local.memory.end()
            return stats, {p.name: getattr(p, "protocol", None) for p in paths}

    return anyio.run(run)


LABELS = {"in_process": "in-process `McpMemorySession.call`", "sdk_in_memory": "SDK client and server in this process, memory streams",
          "stdio": "MCP stdio, SDK client", "http": "MCP HTTP, SDK client",
          "stdio_before": "MCP stdio, SDK client, baseline server", "http_before": "MCP HTTP, SDK client, baseline server",
          "floor_stdio": "floor: bare SDK `MCPServer`, constant tool, stdio", "floor_http": "floor: bare SDK `MCPServer`, constant tool, HTTP"}


def _checks(stats: dict) -> dict:
    out = {}
    for tool, by_path in stats.items():
        reference = by_path["in_process"]["p50"]
        for name, row in by_path.items():
            if name == "in_process":
                continue
            floor = name.startswith("floor")
            budget = None if floor else TARGETS.get(name.split("_")[0])
            over = round(row["p50"] - (0.0 if floor else reference), 2)  # the floor's tool costs nothing: all of it is overhead
            out.setdefault(tool, {})[name] = {"p50": row["p50"], "over_in_process_ms": over, "budget_ms": budget,
                                              "met": None if budget is None else over <= budget,
                                              "ratio": round(row["p50"] / reference, 3)}
    return out


def _markdown(data: dict, args) -> str:
    rows = []
    for tool, by_path in data["stats"].items():
        for name, st in by_path.items():
            label = LABELS[name] + (f" ({data['protocol'][name]})" if data["protocol"].get(name) else "")
            over = ratio = ""
            if name != "in_process":
                c = data["checks"][tool][name]
                met = (f" (budget +{c['budget_ms']:g}: {'met' if c['met'] else 'NOT met'})"
                       if tool == "memory_search" and c["budget_ms"] is not None else "")
                over, ratio = f"{c['over_in_process_ms']:+}{met}", c["ratio"]
                if name.startswith("floor"):
                    over, ratio = f"{c['over_in_process_ms']:+} (over nothing)", ""
            server = "" if st["cpu_server_ms"] is None else st["cpu_server_ms"]
            switches = "" if st.get("server_switches") is None else st["server_switches"]
            rows.append([f"`{tool}`", label, st["n"], st["p50"], st["p95"], st["mean"], over, ratio, st["cpu_here_ms"], server,
                         switches])
    split = [[LABELS[name], st["p50"], st["search_logged"]["p50"], st["outside_search"]["p50"], st["outside_search"]["p95"]]
             for name, st in data["stats"].get("memory_search", {}).items() if "search_logged" in st]
    conc = data["concurrency"]
    floors = []
    for tool, by_path in data["checks"].items():
        for transport in ("stdio", "http"):
            if f"floor_{transport}" in by_path and transport in by_path:
                ours, floor = by_path[transport]["over_in_process_ms"], by_path[f"floor_{transport}"]["p50"]
                floors.append(f"`{tool}` over {transport}: ours {ours:+} ms over in-process, the floor {floor} ms over "
                              f"nothing, so {ours - floor:+.2f} ms is ours (budget {TARGETS[transport]:g} ms).")
    lines = [
        f"MCP tool calls on 1,000 records (the search benchmark's store), warm, query-vector cache off, {args.searches} "
        f"calls per tool and path, every path called once per round (order rotating), times at the client in ms; "
        f"{machine()['cpus']} CPUs shared with other work; `uptime` load average (1, 5, 15 min) at the start "
        f"{data['load_average']['start']}, after the rounds {data['load_average']['after rounds']}, at the end "
        f"{data['load_average']['end']}. Reproduce: `.venv/bin/python -m benchmarks.mcp_latency"
        + (" --baseline CHECKOUT" if args.baseline else "") + ("" if args.floor else " --no-floor") + "`.", "",
        markdown_table(["tool", "path", "n", "p50", "p95", "mean", "p50 over in-process (ms)", "p50 / in-process p50",
                        "CPU ms/call, this process", "CPU ms/call, server", "server context switches/call"], rows), "",
        "Rendering a result as the text a model reads (`format_tool_result`), which the server does and the in-process "
        "reference does not: p50 " + ", ".join(f"{tool} {by_path['in_process']['text_ms']['p50']} ms"
                                               for tool, by_path in data["stats"].items()) + ".", "",
        "Where a `memory_search` call's time goes, per path: the search inside the service as it logged it "
        "(`search_log.total_ms`, in whichever process ran it) and the rest of the call (client time minus that, call "
        "by call: protocol, transport, hand-offs between threads and processes).", "",
        markdown_table(["path", "call p50", "search inside the service p50", "outside the search p50",
                        "outside the search p95"], split), "",
    ]
    if floors:
        lines += ["The floor (a bare SDK server's constant tool, same client, same rounds) against ours, p50: "
                  + " ".join(floors), ""]
    for name, c in conc.items():
        lat = c["latency"]
        server = "this server" if name == "http" else "baseline server"
        lines.append(f"{c['clients']} concurrent HTTP sessions (one client process), {server}: "
                     f"{c['searches']} memory_search calls, {c['throughput_per_s']} searches/s over {c['elapsed_s']} s; "
                     f"latency p50 {lat['p50']} ms, p95 {lat['p95']} ms, max {lat['max']} ms.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--concurrent", type=int, default=8)
    parser.add_argument("--per-client", type=int, default=40)
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout (e.g. a worktree of main) whose servers join the same rounds")
    parser.add_argument("--no-floor", dest="floor", action="store_false",
                        help="leave out the bare SDK server's constant tool (benchmarks/mcp_floor.py)")
    args = parser.parse_args(argv)
    path = _scratch_store()
    with MemoryService.open(path, load_settings()) as service:
        _, token = create_key(service, kind="model", agent_id="bench", user_id="u0", actor="benchmark")
        record_id = service.store.scalar("SELECT id FROM records WHERE scope_id = 'u0' ORDER BY seq LIMIT 1")
    # memory_get (a primary-key read) shows what the transport itself costs; memory_search is the measure
    calls = {"memory_search": [{"query": q} for q in search_corpus.queries(args.searches + WARM)],
             "memory_get": [{"record_id": record_id}] * (args.searches + WARM)}
    loads = {"start": load_average()}
    servers = {"http": _Server(ROOT, path)}
    try:
        if args.baseline is not None:
            servers["http_before"] = _Server(args.baseline.resolve(), path)
        if args.floor:
            servers["floor_http"] = _FloorServer()
        stats, protocol = measure(path, token, calls, args.baseline, servers)
        loads["after rounds"] = load_average()
        concurrency = {name: concurrent_http(server.url, token, args.concurrent, args.per_client)
                       for name, server in servers.items() if not name.startswith("floor")}
    finally:
        for server in servers.values():
            server.stop()
    loads["end"] = load_average()
    data = {"machine": machine(), "load_average": loads, "records": 1000, "calls_per_path": args.searches,
            "baseline": str(args.baseline) if args.baseline else None, "protocol": protocol, "stats": stats,
            "checks": _checks(stats), "concurrency": concurrency}
    markdown = _markdown(data, args)
    save("mcp", data, markdown)
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
