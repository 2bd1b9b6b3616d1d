"""A server killed with SIGKILL leaves its MCP sessions open; the next server to start ends them,
once, with one extraction run each; live servers never end each other's sessions.

Real parts: ``agent-memory mcp`` processes (stdio launched by the SDK's own client, HTTP on a
free port), real stores with the packaged embedder (SQLite files, or PostgreSQL databases with
``--store-backend postgresql``), SIGKILL. Nothing waits on a clock: a
server's start-up sweep has run when it says it is ready (stdio: the session line on stderr, HTTP:
the URL line), and periodic sweeps are counted in the HTTP server's debug log.
"""

import os
import re
import signal
from contextlib import suppress

import httpx
import pytest
from mcp import Client

from memory_core.mcp import owners
from memory_core.mcp.memory_session import SESSION_META_KEY
from tests.mcp.raw_client import PROTOCOL_VERSION, RawHttpSession
from tests.mcp.servers import ServerProcess, new_key, open_service, prepare, run_async, stdio_parameters

pytestmark = pytest.mark.model

SWEPT = re.compile(r"MCP session sweep done")


def _session(target, session_id) -> dict:
    with open_service(target) as service:
        store = service.store
        row = store.query_one("SELECT ended_at, end_reason FROM sessions WHERE id = ?", (session_id,))
        return {"ended": row["ended_at"] is not None, "reason": row["end_reason"],
                "runs": store.scalar("SELECT COUNT(*) FROM extraction_runs WHERE session_id = ?", (session_id,)),
                "ended_events": store.scalar("SELECT COUNT(*) FROM events WHERE kind = 'session.ended' AND payload LIKE ?",
                                             (f"%{session_id}%",))}


def _owner_pid(target, session_id) -> int:
    with open_service(target) as service:
        return int(service.store.scalar("SELECT pid FROM mcp_session_owners WHERE session_id = ?", (session_id,)))


def _open_mcp_sessions(target) -> list[str]:
    with open_service(target) as service:
        return [r["id"] for r in service.store.query(
            "SELECT id FROM sessions WHERE framework = 'mcp' AND ended_at IS NULL ORDER BY started_at, id")]


def test_a_stdio_server_killed_mid_session_is_cleaned_up_by_the_next_start(store_target):
    target = store_target
    prepare(target)
    seen: dict = {}

    async def killed():
        with suppress(BaseException):  # the client's transport breaks under it: that is the point
            async with Client(stdio_parameters(target)) as client:
                wrote = await client.call_tool("memory_write", {"type": "semantic", "content": "The shed key is blue."})
                seen["dead"] = wrote.meta[SESSION_META_KEY]
                seen["pid"] = _owner_pid(target, seen["dead"])
                os.kill(seen["pid"], signal.SIGKILL)
                await client.call_tool("memory_search", {"query": "key"})

    run_async(killed)
    assert owners.process_start(seen["pid"]) is None  # gone (the SDK's client reaped it on the way out)
    assert _session(target, seen["dead"]) == {"ended": False, "reason": None, "runs": 0, "ended_events": 0}

    async def next_start():
        async with Client(stdio_parameters(target)) as client:
            found = await client.call_tool("memory_search", {"query": "shed key"})
            seen["next"] = found.meta[SESSION_META_KEY]
            seen["found"] = [r["content"] for r in found.structured_content["results"]]
            seen["while_open"] = _session(target, seen["dead"])

    run_async(next_start)
    assert seen["found"] == ["The shed key is blue."]  # the write before the kill is whole
    assert seen["while_open"] == {"ended": True, "reason": owners.GONE, "runs": 1, "ended_events": 1}
    assert _session(target, seen["dead"])["runs"] == 1
    assert _session(target, seen["next"]) == {"ended": True, "reason": "the client closed stdin", "runs": 1,
                                              "ended_events": 1}


def test_an_http_server_killed_with_open_sessions_is_cleaned_up_by_the_next_start(store_target):
    target = store_target
    prepare(target)
    _, token = new_key(target, "assistant", "alice")
    server = ServerProcess(target)
    clients = [RawHttpSession(server.url, token) for _ in range(3)]
    for client in clients:
        client.initialize()
        client.call("memory_search", {"query": "anything"})
    dead = _open_mcp_sessions(target)
    assert len(dead) == 3 and {_owner_pid(target, s) for s in dead} == {server.proc.pid}
    server.kill()
    for client in clients:
        client.close()
    assert all(not _session(target, s)["ended"] for s in dead)
    with ServerProcess(target, log_level="info") as again:  # ready means its start-up sweep is done
        assert "ended 3 MCP session(s) left open by servers that stopped without ending them" in again.output()
        for session_id in dead:
            assert _session(target, session_id) == {"ended": True, "reason": owners.GONE, "runs": 1, "ended_events": 1}
        fresh = RawHttpSession(again.url, token)
        fresh.initialize()
        assert not fresh.call("memory_search", {"query": "anything"})["result"]["isError"]
        fresh.close()


def test_two_servers_starting_at_once_end_a_dead_servers_sessions_once(store_target):
    target = store_target
    prepare(target)
    _, token = new_key(target, "assistant", "alice")
    server = ServerProcess(target)
    for _ in range(4):
        RawHttpSession(server.url, token).initialize()
    dead = _open_mcp_sessions(target)
    server.kill()
    first, second = ServerProcess.starting(target), ServerProcess.starting(target)
    try:
        first.ready(), second.ready()
        for session_id in dead:
            assert _session(target, session_id) == {"ended": True, "reason": owners.GONE, "runs": 1, "ended_events": 1}
    finally:
        first.stop(), second.stop()


def test_live_servers_never_end_each_others_sessions(store_target):
    """An HTTP server with a session held open by a GET stream (a request in flight, for longer than
    the idle limit), a stdio server, and a second HTTP server sweeping every half second: nobody ends
    anybody's session; once the stream closes, the owner's own idle timer ends it."""
    target = store_target
    prepare(target)
    _, token = new_key(target, "assistant", "alice")
    idle = {"mcp__session_idle_s": "2"}
    seen: dict = {}
    with ServerProcess(target, log_level="info", **idle) as owner:
        held = RawHttpSession(owner.url, token)
        held.initialize()
        (mine,) = _open_mcp_sessions(target)

        async def stdio_and_watch():
            with httpx.Client(timeout=60) as http, http.stream("GET", owner.url, headers={
                    "Authorization": f"Bearer {token}", "Mcp-Session-Id": held.session_id,
                    "Accept": "text/event-stream", "Mcp-Protocol-Version": PROTOCOL_VERSION}) as stream:
                assert stream.status_code == 200
                async with Client(stdio_parameters(target, **idle)) as client:
                    found = await client.call_tool("memory_search", {"query": "anything"})
                    seen["stdio"] = found.meta[SESSION_META_KEY]
                    with ServerProcess(target, log_level="debug", **idle) as sweeper:
                        for _ in range(int(owners.idle_limit_s(2) / 0.5) + 3):  # sweeps covering the idle limit
                            sweeper.wait_for(SWEPT, timeout=30)
                        seen["during"] = {s: _session(target, s) for s in (mine, seen["stdio"])}
                        reply = held.call("memory_search", {"query": "still here"})
                        seen["still_served"] = not reply["result"]["isError"]

        run_async(stdio_and_watch)
        ended = owner.wait_for(re.compile(r"MCP session \w+ ended \(idle for 2 s\): memory session (ses_\w+)"))
        held.close()
    for session_id, state in seen["during"].items():
        assert state == {"ended": False, "reason": None, "runs": 0, "ended_events": 0}, session_id
    assert seen["still_served"]
    assert ended.group(1) == mine
    assert _session(target, mine) == {"ended": True, "reason": "idle for 2 s", "runs": 1, "ended_events": 1}
