"""The SDK's own client drives ``agent-memory mcp`` over stdio, in both protocol eras the SDK speaks.

Real parts: the server is the CLI in its own process, on a real SQLite store with the packaged
MiniLM embedder; the client is ``mcp.Client`` launching it as a host would.
"""

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from memory_core.mcp.memory_session import DOWNGRADE_NOTE, MCP_NOTE, SESSION_META_KEY
from tests.mcp.servers import instructions_of, open_service, prepare, stdio_parameters, run_async
from tests.unit.ambient.helpers import said

pytestmark = pytest.mark.model


def _counts(target) -> dict[str, int]:
    with open_service(target) as service:
        return {t: service.store.scalar(f"SELECT COUNT(*) FROM {t}") for t in ("records", "write_log", "events")}


@pytest.mark.parametrize("mode, version", [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_the_sdk_client_over_stdio_gets_the_core_tools_and_one_memory_session(tmp_path, mode, version):
    target = tmp_path / "m.sqlite"
    prepare(target)
    with open_service(target) as service:
        core = {s["name"]: s for s in service.tool_schemas()}
    seen: dict = {}

    async def conversation():
        async with Client(stdio_parameters(target), mode=mode) as client:
            seen["version"] = client.protocol_version
            seen["instructions"] = instructions_of(client)
            seen["tools"] = (await client.list_tools()).tools
            seen["write"] = await client.call_tool("memory_write", {
                "type": "semantic", "content": "The user prefers green tea.", "attribute": "drink",
                "source_kind": "user_statement", "evidence": "I prefer green tea"})
            seen["search"] = await client.call_tool("memory_search", {"query": "what does the user like to drink"})
            rid = seen["write"].structured_content["record_id"]
            seen["get"] = await client.call_tool("memory_get", {"record_id": rid})
            seen["missing"] = await client.call_tool("memory_get", {"record_id": "mem_0000000000000000"})
            seen["revise"] = await client.call_tool("memory_revise", {
                "action": "update", "record_id": rid, "content": "The user prefers oolong tea.", "reason": "corrected"})
            seen["forget"] = await client.call_tool("memory_forget", {
                "record_id": seen["revise"].structured_content["record_id"], "reason": "asked to forget"})

    run_async(conversation)
    assert seen["version"] == version
    assert {t.name for t in seen["tools"]} == set(core)
    for tool in seen["tools"]:
        assert tool.input_schema == core[tool.name]["input_schema"]  # the core's schema, unchanged
        assert tool.description == core[tool.name]["description"]
    hints = {t.name: t.annotations for t in seen["tools"]}
    assert hints["memory_search"].read_only_hint and hints["memory_get"].read_only_hint
    assert hints["memory_forget"].destructive_hint and not hints["memory_write"].read_only_hint
    assert MCP_NOTE in seen["instructions"]

    write = seen["write"]
    assert not write.is_error and write.structured_content["downgraded"]  # an MCP server cannot check the quote
    assert write.structured_content["source_kind"] == "agent_inference" and DOWNGRADE_NOTE in write.structured_content["notes"]
    assert write.content[0].text.startswith(DOWNGRADE_NOTE)
    session_id = write.meta[SESSION_META_KEY]
    assert [r["content"] for r in seen["search"].structured_content["results"]] == ["The user prefers green tea."]
    assert seen["get"].structured_content["record"]["content"] == "The user prefers green tea."
    missing = seen["missing"]
    assert missing.is_error and missing.structured_content["error"]["code"] == "not_found"
    assert missing.content[0].text.startswith("Error (not_found)")
    assert not seen["revise"].is_error and not seen["forget"].is_error

    with open_service(target) as service:
        row = service.store.query_one("SELECT framework, trigger_mode, ended_at FROM sessions WHERE id = ?", (session_id,))
        assert (row["framework"], row["trigger_mode"]) == ("mcp", "tool_only") and row["ended_at"] is not None
        assert service.store.scalar("SELECT status FROM extraction_runs WHERE session_id = ?", (session_id,)) == "queued"
        context = service.session_context(session_id)
        assert context["system_text"] == seen["instructions"] and context["framework"] == "mcp"
        assert [t["name"] for t in context["offered_tools"]] == [t.name for t in seen["tools"]]
        searches = service.store.query("SELECT origin FROM search_log WHERE session_id = ?", (session_id,))
        assert [s["origin"] for s in searches] == ["model"]


def test_identity_in_a_tool_call_and_unknown_tools_change_nothing(tmp_path):
    target = tmp_path / "m.sqlite"
    prepare(target)
    before = _counts(target)
    results: dict = {}

    async def attempts():
        async with Client(stdio_parameters(target)) as client:
            results["search"] = await client.call_tool("memory_search", {"query": "tea", "user_id": "bob"})
            results["write"] = await client.call_tool("memory_write", {
                "type": "semantic", "content": "Bob likes tea.", "agent_id": "other", "scope": "user:bob"})
            results["target"] = await client.call_tool("memory_write", {
                "type": "semantic", "content": "Bob likes tea.", "target": "user:bob"})
            try:
                await client.call_tool("memory_delete_everything", {})
            except MCPError as exc:
                results["unknown"] = exc

    run_async(attempts)
    for name in ("search", "write", "target"):
        assert results[name].is_error and results[name].structured_content["error"]["code"] == "invalid_input", name
    assert results["unknown"].code == -32602 and "Unknown tool" in results["unknown"].message
    after = _counts(target)
    assert after["records"] == before["records"] == 0
    # the refused writes left refusal rows (the audit of attempts), nothing else
    assert after["write_log"] == before["write_log"] + 2


def test_the_ambient_profile_is_in_the_instructions_and_fixed_for_the_session(tmp_path):
    target = tmp_path / "m.sqlite"
    prepare(target)
    with open_service(target) as service:
        said(service.start_session(agent_id="assistant", user_id="alice"), "I prefer concise answers.",
             "The user prefers concise answers.", "answer_style")
    seen: dict = {}

    async def two_sessions():
        async with Client(stdio_parameters(target, "assistant", "alice", "--ambient")) as client:
            seen["first"] = instructions_of(client)
            first = await client.call_tool("memory_search", {"query": "answers"})
            seen["first_id"] = first.meta[SESSION_META_KEY]
            with open_service(target) as service:  # a new preference arrives while the session is open
                said(service.start_session(agent_id="assistant", user_id="alice"), "Please answer me in French.",
                     "The user wants answers in French.", "language")
                seen["during"] = service.session_context(seen["first_id"])
            await client.list_tools()
        async with Client(stdio_parameters(target, "assistant", "alice", "--ambient")) as client:
            seen["second"] = instructions_of(client)

    run_async(two_sessions)
    assert "The user prefers concise answers." in seen["first"] and "French" not in seen["first"]
    assert seen["during"]["system_text"] == seen["first"]  # recorded once, unchanged mid-session
    assert "French" in seen["second"]
    with open_service(target) as service:
        assert service.session_context(seen["first_id"])["system_text"] == seen["first"]


def _end_of(target, session_id: str) -> dict:
    with open_service(target) as service:
        row = service.store.query_one("SELECT ended_at, end_reason FROM sessions WHERE id = ?", (session_id,))
        runs = service.store.scalar("SELECT COUNT(*) FROM extraction_runs WHERE session_id = ?", (session_id,))
    return {"ended": row["ended_at"] is not None, "reason": row["end_reason"], "runs": runs}


@pytest.mark.timeout(300)
def test_concurrent_calls_each_get_their_own_whole_result(tmp_path):
    """Thirty-two memory_get calls at once from the SDK's client, answered by the server's worker
    threads in whatever order they finish: replies many times a pipe's buffer in all, each
    one whole JSON-RPC line carrying its own record. The client leaving closes stdin, and the
    session ends for that reason (not because the client had to stop the process)."""
    import anyio

    target = tmp_path / "m.sqlite"
    prepare(target)
    contents = {}
    with open_service(target) as service:
        session = service.start_session(agent_id="assistant", user_id="alice")
        for i in range(8):
            text = f"Note {i}: " + " ".join(f"caf\u00e9-{i}-{j} \u05e9\u05dc\u05d5\u05dd" for j in range(400))
            written = session.call_tool("memory_write", {"type": "semantic", "attribute": f"note_{i}",
                                                         "source_kind": "agent_inference", "content": text[:3900]})
            assert written["ok"], written
            contents[written["record_id"]] = text[:3900]
    calls = [record_id for record_id in contents for _ in range(4)]
    seen: dict = {}

    async def burst():
        async with Client(stdio_parameters(target)) as client:
            async def get(n: int) -> None:
                seen[n] = await client.call_tool("memory_get", {"record_id": calls[n]})

            async with anyio.create_task_group() as group:
                for n in range(len(calls)):
                    group.start_soon(get, n)

    run_async(burst)
    assert sorted(seen) == list(range(len(calls)))
    for n, result in seen.items():
        assert not result.is_error and result.structured_content["record"]["content"] == contents[calls[n]]
    session_id = seen[0].meta[SESSION_META_KEY]
    assert {r.meta[SESSION_META_KEY] for r in seen.values()} == {session_id}
    assert _end_of(target, session_id) == {"ended": True, "reason": "the client closed stdin", "runs": 1}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("before_closing", ["nothing", "initialize", "calls in flight"])
def test_a_closed_stdin_ends_the_server_cleanly(tmp_path, before_closing):
    """The client closes stdin (before a word, after the handshake, or with calls not yet answered):
    the server ends its memory session with that reason, queues its extraction, and exits 0 without
    a traceback."""
    import json
    import re
    import sys

    from tests.mcp.raw_client import RawStdioSession
    from tests.mcp.servers import ROOT, server_env

    target = tmp_path / "m.sqlite"
    prepare(target)
    session = RawStdioSession([sys.executable, "-m", "memory_core.cli", "mcp", "--path", str(target), "--agent-id",
                               "assistant", "--user-id", "alice"], env=server_env(), cwd=str(ROOT))
    if before_closing != "nothing":
        session.initialize()
    if before_closing == "calls in flight":
        for n in range(4):
            session.send_line(json.dumps({"jsonrpc": "2.0", "id": 100 + n, "method": "tools/call", "params": {
                "name": "memory_search", "arguments": {"query": f"anything {n}"}}}).encode())
    code, stderr = session.close()
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    opened = re.search(r"memory session (ses_\w+)", stderr)
    assert opened and re.search(r"session ended; extraction run run_\w+", stderr), stderr
    assert _end_of(target, opened.group(1)) == {"ended": True, "reason": "the client closed stdin", "runs": 1}
