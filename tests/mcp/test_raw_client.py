"""The independent client (tests/mcp/raw_client.py, written from the specification) against the real
server over both transports: the wire format itself, not only what the SDK makes of it."""

import json
import re
import sys

import pytest

from tests.mcp.raw_client import RawHttpSession, RawStdioSession
from tests.mcp.servers import ROOT, ServerProcess, new_key, open_service, prepare, server_env

pytestmark = pytest.mark.model
ASCII_VISIBLE = re.compile(r"^[\x21-\x7e]+$")


def _core_schemas(target) -> dict:
    with open_service(target) as service:
        return {s["name"]: s for s in service.tool_schemas()}


def _check_initialize(result: dict) -> None:
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"]["name"] == "agent-memory" and result["serverInfo"]["version"]
    assert "tools" in result["capabilities"]
    assert result["instructions"].startswith("Long-term memory:")


def _check_tools(listed: dict, core: dict) -> None:
    tools = {t["name"]: t for t in listed["result"]["tools"]}
    assert set(tools) == set(core)
    for name, tool in tools.items():
        assert tool["inputSchema"] == core[name]["input_schema"]
        assert set(tool["annotations"]) <= {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
    assert tools["memory_search"]["annotations"]["readOnlyHint"] is True
    assert tools["memory_forget"]["annotations"]["destructiveHint"] is True


def _check_call(reply: dict, *, error: bool) -> dict:
    result = reply["result"]
    assert result["isError"] is error
    assert result["content"][0]["type"] == "text" and isinstance(result["content"][0]["text"], str)
    assert isinstance(result["structuredContent"], dict) and result["structuredContent"]["ok"] is (not error)
    assert result["_meta"]["agent-memory/session_id"].startswith("ses_")
    return result["structuredContent"]


@pytest.mark.parametrize("mode, content_type", [("json", "application/json"), ("sse", "text/event-stream")])
def test_the_wire_over_streamable_http(tmp_path, mode, content_type):
    target = tmp_path / "m.sqlite"
    prepare(target)
    _, token = new_key(target, "assistant", "alice")
    core = _core_schemas(target)
    with ServerProcess(target, mcp__http_response=mode) as server:
        session = RawHttpSession(server.url, token)
        first = session.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
        assert first.headers["content-type"].startswith(content_type)
        assert ASCII_VISIBLE.match(first.headers["mcp-session-id"])
        session.session_id = first.headers["mcp-session-id"]
        (reply,) = session.messages(first)
        assert reply["id"] == 0
        _check_initialize(reply["result"])
        assert session.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
        _check_tools(session.request("tools/list"), core)
        written = _check_call(session.call("memory_write", {"type": "semantic", "content": "The user's cat is called Miso.",
                                                            "attribute": "cat_name"}), error=False)
        found = _check_call(session.call("memory_search", {"query": "what is the cat called"}), error=False)
        assert [r["id"] for r in found["results"]] == [written["record_id"]]
        _check_call(session.call("memory_get", {"record_id": "mem_ffffffffffffffff"}), error=True)
        assert session.request("ping")["result"] == {}
        old = session.post({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}, headers={"MCP-Protocol-Version": "1999-01-01"})
        assert old.status_code == 400 and old.json()["error"]["code"] == -32022
        assert session.delete().status_code == 200
        gone = session.post({"jsonrpc": "2.0", "id": 100, "method": "tools/list"})
        assert gone.status_code == 404
        session.close()


def _stdio(target, *extra: str) -> RawStdioSession:
    command = [sys.executable, "-m", "memory_core.cli", "mcp", "--path", str(target), "--agent-id", "assistant",
               "--user-id", "alice", *extra]
    return RawStdioSession(command, env=server_env(), cwd=str(ROOT))


def test_the_wire_over_stdio(tmp_path):
    target = tmp_path / "m.sqlite"
    prepare(target)
    core = _core_schemas(target)
    session = _stdio(target)
    reply = session.initialize()
    assert reply["id"] == 1 and reply["jsonrpc"] == "2.0"
    _check_initialize(reply["result"])
    _check_tools(session.request("tools/list"), core)
    session.send_line(b'{"jsonrpc": "2.0", "id": 77, "method": "tools/list"')  # cut short
    broken = session.read_message()
    assert broken["error"]["code"] == -32700 and broken.get("id") is None
    unknown = session.request("tools/call", {"name": "memory_format_disk", "arguments": {}})
    assert unknown["error"]["code"] == -32602
    written = _check_call(session.request("tools/call", {"name": "memory_write", "arguments": {
        "type": "semantic", "content": "The user's locker is number 41.", "attribute": "locker"}}), error=False)
    code, stderr = session.close()
    assert code == 0
    ended = re.search(r"session ended; extraction run (run_\w+)", stderr)
    assert ended, stderr
    with open_service(target) as service:
        run = service.store.query_one("SELECT session_id FROM extraction_runs WHERE id = ?", (ended.group(1),))
        assert service.record(written["record_id"]).source_ref == run["session_id"]


def test_a_request_before_initialize_is_refused_over_stdio(tmp_path):
    target = tmp_path / "m.sqlite"
    prepare(target)
    session = _stdio(target)
    early = session.request("tools/call", {"name": "memory_write", "arguments": {"type": "semantic", "content": "Early."}})
    assert "error" in early
    assert json.loads(json.dumps(early))["error"]["code"] in (-32600, -32602)
    session.close()
    with open_service(target) as service:
        assert service.store.scalar("SELECT COUNT(*) FROM records") == 0


def test_pipelined_requests_and_a_line_longer_than_the_pipe_are_all_answered_over_stdio(tmp_path):
    """The server reads and writes its pipes on the event loop: a reply it cannot write yet (the
    client is not reading) waits, and a request line longer than a pipe's buffer arrives whole."""
    target = tmp_path / "m.sqlite"
    prepare(target)
    session = _stdio(target)
    session.initialize()
    first = session.next_id
    burst = [json.dumps({"jsonrpc": "2.0", "id": first + i, "method": "tools/list"}).encode() for i in range(40)]
    session.proc.stdin.write(b"\n".join(burst) + b"\n")  # 40 replies of the whole tool list, none read yet
    session.proc.stdin.flush()
    session.next_id += len(burst)
    replies = [session.read_message() for _ in burst]
    assert sorted(r["id"] for r in replies) == [first + i for i in range(40)]
    assert all(len(r["result"]["tools"]) == 5 for r in replies)
    long = session.request("tools/call", {"name": "memory_search", "arguments": {"query": "q" * 300_000}})
    assert long["result"]["isError"] is True
    assert long["result"]["structuredContent"]["error"]["code"] == "invalid_input"
    code, _ = session.close()
    assert code == 0


def test_a_library_that_prints_during_a_tool_call_cannot_corrupt_the_stdio_stream(tmp_path):
    """While the server runs, descriptor 1 points at stderr: a print or a raw write to fd 1 from any
    library lands there, and the protocol stream carries only JSON-RPC."""
    target = tmp_path / "m.sqlite"
    prepare(target)
    code = (
        "import os, sys\n"
        "from memory_core.mcp import memory_session\n"
        "call = memory_session.McpMemorySession.call\n"
        "def noisy(self, name, arguments):\n"
        "    print('a library printing to stdout')\n"
        "    os.write(1, b'a raw write to descriptor 1\\n')\n"
        "    return call(self, name, arguments)\n"
        "memory_session.McpMemorySession.call = noisy\n"
        "from memory_core.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    session = RawStdioSession([sys.executable, "-c", code, "mcp", "--path", str(target), "--agent-id", "assistant",
                               "--user-id", "alice"], env=server_env(), cwd=str(ROOT))
    session.initialize()
    written = _check_call(session.call("memory_write", {"type": "semantic", "content": "The user's desk is by the window.",
                                                        "attribute": "desk"}), error=False)
    found = _check_call(session.call("memory_search", {"query": "where is the desk"}), error=False)
    assert [r["id"] for r in found["results"]] == [written["record_id"]]
    code, stderr = session.close()
    assert code == 0
    assert stderr.count("a library printing to stdout") == 2 and stderr.count("a raw write to descriptor 1") == 2
