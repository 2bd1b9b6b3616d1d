"""``agent-memory mcp --http``: the SDK's client over streamable HTTP, keys, and every bad request.

One real server process (uvicorn, a real SQLite store, the packaged embedder) serves the module;
each refusal is checked for its status and JSON-RPC error and for writing nothing.
"""

import logging
import re

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from memory_core.mcp.keys import revoke_key
from memory_core.mcp.memory_session import SESSION_META_KEY
from tests.mcp.raw_client import RawHttpSession
from tests.mcp.servers import ServerProcess, http_client, instructions_of, new_key, open_service, prepare, run_async

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    target = tmp_path_factory.mktemp("http") / "m.sqlite"
    prepare(target)
    keys = {"alice": new_key(target, "assistant", "alice"), "bob": new_key(target, "other", "bob"),
            "host": new_key(target, "assistant", "alice", kind="host"), "revoked": new_key(target, "assistant", "alice")}
    with open_service(target) as service:
        revoke_key(service, keys["revoked"][0], actor="test")
    server = ServerProcess(target, log_level="debug")  # the most talkative level: still no token in it
    yield {"target": target, "server": server, "tokens": {k: v[1] for k, v in keys.items()},
           "key_ids": {k: v[0] for k, v in keys.items()}}
    server.stop()


def _writes(target) -> dict[str, int]:
    with open_service(target) as service:
        return {t: service.store.scalar(f"SELECT COUNT(*) FROM {t}") for t in
                ("records", "write_log", "sessions", "turns", "search_log", "host_sessions", "extraction_runs")}


def test_the_sdk_client_falls_back_to_a_session_and_gets_the_tools(world):
    seen: dict = {}

    async def conversation():
        async with http_client(world["server"].url, world["tokens"]["alice"]) as client:
            seen["version"] = client.protocol_version
            seen["instructions"] = instructions_of(client)
            seen["tools"] = [t.name for t in (await client.list_tools()).tools]
            seen["write"] = await client.call_tool("memory_write", {
                "type": "semantic", "content": "The user's bike is a green Brompton.", "attribute": "bike"})
            seen["search"] = await client.call_tool("memory_search", {"query": "which bike does the user ride"})

    run_async(conversation)
    assert seen["version"] == "2025-11-25"  # the 2026-07-28 probe is refused with -32022, the SDK falls back
    assert sorted(seen["tools"]) == ["memory_forget", "memory_get", "memory_revise", "memory_search", "memory_write"]
    assert not seen["write"].is_error and seen["write"].structured_content["status"] == "provisional"
    assert [r["content"] for r in seen["search"].structured_content["results"]] == ["The user's bike is a green Brompton."]
    session_id = seen["search"].meta[SESSION_META_KEY]
    with open_service(world["target"]) as service:  # the client's DELETE on leaving ended it before the reply
        row = service.store.query_one("SELECT agent_id, user_id, framework, ended_at FROM sessions WHERE id = ?", (session_id,))
        assert (row["agent_id"], row["user_id"], row["framework"]) == ("assistant", "alice", "mcp") and row["ended_at"]
        assert service.store.scalar("SELECT COUNT(*) FROM extraction_runs WHERE session_id = ?", (session_id,)) == 1
        assert service.session_context(session_id)["system_text"] == seen["instructions"]
        last_used = service.store.scalar("SELECT last_used_at FROM api_keys WHERE id = ?", (world["key_ids"]["alice"],))
        assert last_used is not None


def test_the_sdk_client_makes_its_calls_over_the_connections_it_keeps(world, caplog):
    """Each answer is one JSON body (mcp.http_response json), which the SDK's client reads to its
    end and so can reuse the connection; answered with an event stream, it closes the connection
    after the reply and opens a new one for every call."""
    caplog.set_level(logging.DEBUG, logger="httpcore2.connection")
    opened: dict = {}

    def connections() -> int:
        return sum(r.getMessage().startswith("connect_tcp.complete") for r in caplog.records)

    async def calls():
        async with http_client(world["server"].url, world["tokens"]["alice"]) as client:
            await client.call_tool("memory_search", {"query": "a first call opens what the client needs"})
            opened["before"] = connections()
            for i in range(10):
                result = await client.call_tool("memory_search", {"query": f"call number {i}"})
                assert not result.is_error
            opened["after"] = connections()

    run_async(calls)
    assert opened["before"] >= 1  # the log does show the client's connections
    assert opened["after"] == opened["before"]


@pytest.mark.parametrize("mode", ["json", "sse"])
def test_the_sdk_client_gets_the_same_answers_in_either_response_mode(tmp_path, mode):
    """mcp.http_response sse (an event stream per request) still serves the SDK's client: the
    replies it reads are of the configured kind and carry what the json mode carries."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    target = tmp_path / "m.sqlite"
    prepare(target)
    _, token = new_key(target, "assistant", "alice")
    kinds: list[str] = []
    seen: dict = {}

    async def note(response):
        if response.request.method == "POST" and response.status_code == 200:
            kinds.append(response.headers["content-type"].split(";")[0])

    async def conversation(url):
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
            http.event_hooks["response"].append(note)
            async with Client(streamable_http_client(url, http_client=http)) as client:
                seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
                written = await client.call_tool("memory_write", {
                    "type": "semantic", "content": "The user's kettle is a blue enamel one.", "attribute": "kettle"})
                found = await client.call_tool("memory_search", {"query": "what kind of kettle"})
                refused = await client.call_tool("memory_get", {"record_id": "no such record"})
                seen["calls"] = (written.is_error, found.is_error, refused.is_error)
                seen["found"] = [r["id"] for r in found.structured_content["results"]]
                seen["written"] = written.structured_content["record_id"]
                seen["refusal"] = refused.structured_content["error"]["code"]

    with ServerProcess(target, mcp__http_response=mode) as server:
        run_async(conversation, server.url)
    assert seen["tools"] == ["memory_forget", "memory_get", "memory_revise", "memory_search", "memory_write"]
    assert seen["calls"] == (False, False, True) and seen["found"] == [seen["written"]]
    assert seen["refusal"] == "invalid_input"  # a structured tool error a model can read, in either mode
    expected = "application/json" if mode == "json" else "text/event-stream"
    assert len(kinds) >= 5 and set(kinds) == {expected}, kinds


def _raw(world, **headers) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    base = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    return httpx.post(world["server"].url, json=body, headers={**base, **headers}, timeout=30)


@pytest.mark.parametrize("authorization", [None, "", "Bearer", "Basic dXNlcjpwYXNz", "Bearer am_model_forged",
                                           "Bearer am_model_" + "A" * 43, "bearer  " + "x" * 5000, "revoked"])
def test_a_missing_forged_or_revoked_token_gets_the_same_401_and_writes_nothing(world, authorization):
    before = _writes(world["target"])
    if authorization == "revoked":
        authorization = "Bearer " + world["tokens"]["revoked"]
    response = _raw(world, **({"Authorization": authorization} if authorization is not None else {}))
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "a valid bearer token is required"}}
    assert _writes(world["target"]) == before


def test_a_host_key_cannot_open_mcp_sessions_and_a_model_key_cannot_report_transcripts(world):
    before = _writes(world["target"])
    response = _raw(world, Authorization="Bearer " + world["tokens"]["host"])
    assert response.status_code == 403 and "host key" in response.json()["error"]["message"]
    hook = httpx.post(world["server"].base + "/hooks", json={"event": "Stop", "payload": {"session_id": "s"}},
                      headers={"Authorization": "Bearer " + world["tokens"]["alice"]}, timeout=30)
    assert hook.status_code == 403 and "model key" in hook.json()["error"]["message"]
    assert _writes(world["target"]) == before


@pytest.mark.parametrize("headers, status", [
    ({"Origin": "https://evil.example"}, 403), ({"Origin": "http://localhost.evil.example"}, 403),
    ({"Origin": "http://127.0.0.1:9999@evil.example"}, 403), ({"Origin": "null"}, 403),
    ({"Host": "evil.example"}, 421), ({"Host": "127.0.0.1.nip.io:8765"}, 421),
])
def test_a_wrong_origin_or_host_is_refused_before_the_key_is_looked_at(world, headers, status):
    before = _writes(world["target"])
    response = _raw(world, Authorization="Bearer " + world["tokens"]["alice"], **headers)
    assert response.status_code == status and response.json()["error"]["code"] == -32600
    assert _writes(world["target"]) == before


def test_a_loopback_origin_is_accepted(world):
    session = RawHttpSession(world["server"].url, world["tokens"]["alice"], headers={"Origin": "http://localhost:3000"})
    try:
        assert session.initialize()["serverInfo"]["name"] == "agent-memory"
        assert session.delete().status_code == 200
    finally:
        session.close()


def test_bad_requests_get_clear_protocol_errors_and_write_nothing(world):
    token = world["tokens"]["alice"]
    session = RawHttpSession(world["server"].url, token)
    before = _writes(world["target"])
    not_json = session.post(b"{this is not json")
    assert not_json.status_code == 400 and not_json.json()["error"]["code"] == -32700
    not_initialize = session.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert not_initialize.status_code == 400 and "initialize" in not_initialize.json()["error"]["message"]
    big = session.post(b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"x": "' + b"a" * 1_100_000 + b'"}}')
    assert big.status_code == 413
    modern = session.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={"MCP-Protocol-Version": "2026-07-28"})
    assert modern.status_code == 400 and modern.json()["error"]["code"] == -32022
    assert "2025-11-25" in modern.json()["error"]["data"]["supported"]
    wrong_accept = session.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                                headers={"Accept": "text/html"})
    assert wrong_accept.status_code == 406
    unknown = session.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={"Mcp-Session-Id": "nope"})
    assert unknown.status_code == 404
    assert httpx.put(world["server"].url, headers={"Authorization": f"Bearer {token}"}).status_code == 405
    assert httpx.get(world["server"].url, headers={"Authorization": f"Bearer {token}"}).status_code == 400
    assert httpx.get(world["server"].base + "/nothing-here").status_code == 404
    assert _writes(world["target"]) == before

    session.initialize()
    opened = _writes(world["target"])
    assert opened["sessions"] == before["sessions"] + 1
    garbage = session.post(b"[1, 2, 3")
    assert garbage.status_code == 400 and "error" in garbage.json()
    unknown_tool = session.call("memory_drop_tables", {})
    assert unknown_tool["error"]["code"] == -32602
    wrong_shape = session.request("tools/call", {"name": "memory_search", "arguments": "not an object"})
    assert wrong_shape["error"]["code"] == -32602
    no_method = session.request("tools/destroy", {})
    assert no_method["error"]["code"] == -32601
    long_query = session.call("memory_search", {"query": "x" * 100_000})
    assert long_query["result"]["isError"] and long_query["result"]["structuredContent"]["error"]["code"] == "invalid_input"
    others = session.call("memory_write", {"type": "semantic", "content": "Bob hates tea.", "user_id": "bob"})
    assert others["result"]["isError"]
    after = _writes(world["target"])
    assert after["records"] == before["records"] and after["search_log"] == before["search_log"]
    assert after["write_log"] == before["write_log"] + 1  # the refused write's audit row, and nothing else
    assert session.delete().status_code == 200
    session.close()


def test_another_users_key_cannot_use_a_session(world):
    alice = RawHttpSession(world["server"].url, world["tokens"]["alice"])
    alice.initialize()
    bob = RawHttpSession(world["server"].url, world["tokens"]["bob"])
    bob.session_id = alice.session_id  # bob learned alice's session id
    try:
        stolen = bob.post({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
        assert stolen.status_code == 404 and stolen.json()["error"]["message"] == "Session not found"
        assert bob.delete().status_code == 404
        assert alice.request("tools/list")["result"]["tools"]  # alice's session is untouched
    finally:
        alice.delete()
        alice.close()
        bob.close()


def test_a_revoked_key_is_refused_at_its_next_request(world):
    key_id, token = new_key(world["target"], "assistant", "alice")
    session = RawHttpSession(world["server"].url, token)
    session.initialize()
    assert "result" in session.request("tools/list")
    with open_service(world["target"]) as service:
        revoke_key(service, key_id, actor="test")
    assert session.post({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).status_code == 401
    session.close()


def test_the_sdk_client_sees_protocol_errors_as_errors(world):
    async def attempt():
        async with http_client(world["server"].url, world["tokens"]["alice"]) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("not_a_tool", {})
            return caught.value

    error = run_async(attempt)
    assert error.code == -32602 and "Unknown tool" in error.message


def test_no_token_ever_reaches_the_log_or_the_store(world):
    output = world["server"].output()
    assert "agent-memory MCP on http://127.0.0.1:" in output and "DEBUG" in output  # the log is really there
    files = b"".join(p.read_bytes() for p in world["target"].parent.glob("m.sqlite*"))
    for name, token in world["tokens"].items():
        secret = re.sub(r"^am_(model|host)_", "", token)
        assert secret not in output, name
        assert secret.encode() not in files, name


def test_an_idle_session_is_ended_and_its_extraction_queued(tmp_path):
    target = tmp_path / "m.sqlite"
    prepare(target)
    _, token = new_key(target, "assistant", "alice")
    with ServerProcess(target, log_level="info", mcp__session_idle_s="1") as server:
        session = RawHttpSession(server.url, token)
        session.initialize()
        session.call("memory_search", {"query": "anything"})
        ended = server.wait_for(re.compile(r"MCP session (\w+) ended \(idle for 1 s\): memory session (ses_\w+), "
                                           r"extraction run (run_\w+)"))
        assert ended.group(1) == session.session_id
        assert session.post({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).status_code == 404
        session.close()
    with open_service(target) as service:
        assert service.store.scalar("SELECT ended_at FROM sessions WHERE id = ?", (ended.group(2),)) is not None
        assert service.store.scalar("SELECT session_id FROM extraction_runs WHERE id = ?", (ended.group(3),)) == ended.group(2)


def test_stopping_the_server_ends_its_open_sessions(tmp_path):
    target = tmp_path / "m.sqlite"
    prepare(target)
    _, token = new_key(target, "assistant", "alice")
    server = ServerProcess(target, log_level="info")
    session = RawHttpSession(server.url, token)
    session.initialize()
    assert server.stop() in (0, -15)  # uvicorn shuts down, then re-raises the SIGTERM it caught
    session.close()
    assert f"MCP session {session.session_id} ended (the server is stopping)" in server.output()
    with open_service(target) as service:
        rows = service.store.query("SELECT ended_at FROM sessions")
        assert len(rows) == 1 and rows[0]["ended_at"] is not None
        assert service.store.scalar("SELECT COUNT(*) FROM extraction_runs") == 1


def test_lone_surrogates_on_the_wire_are_a_parse_error_and_write_nothing(world):
    """JSON may spell a lone surrogate (``\\ud800``); no store can keep one. The SDK's parser refuses
    the message before any tool runs."""
    session = RawHttpSession(world["server"].url, world["tokens"]["alice"])
    session.initialize()
    before = _writes(world["target"])
    for raw in (b'"The user likes \\ud800 tea."', b'"\\udfff"', b'"pair reversed \\udc00\\ud800"'):
        body = (b'{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "memory_write", '
                b'"arguments": {"type": "semantic", "content": ' + raw + b'}}}')
        response = session.post(body)
        assert response.status_code == 400 and response.json()["error"]["code"] == -32700, response.text
    assert _writes(world["target"]) == before
    assert "result" in session.request("tools/list")  # the session is unharmed
    session.delete()
    session.close()


def test_the_hook_endpoint_refuses_bad_events_and_records_good_ones(world):
    hooks = world["server"].base + "/hooks"
    auth = {"Authorization": "Bearer " + world["tokens"]["host"]}
    before = _writes(world["target"])
    for body in (b"not json", b"[]", b'{"event": "Stop"}', b'{"event": "Bogus", "payload": {"session_id": "s"}}',
                 b'{"event": "Stop", "payload": {"session_id": "s"}, "turns": [{"line": 0, "role": "tool", "content": "x", "at": null}]}',
                 b'{"event": "Stop", "payload": {"session_id": "s", "prompt": "\\ud800"}}',
                 b'{"event": "Stop", "payload": {"session_id": "s"}, "transcript_lines": -1}'):
        refused = httpx.post(hooks, content=body, headers={**auth, "Content-Type": "application/json"}, timeout=30)
        assert refused.status_code == 400 and refused.json()["ok"] is False, body
    assert _writes(world["target"]) == before
    assert httpx.get(hooks, headers=auth, timeout=30).status_code == 405
    good = httpx.post(hooks, json={"event": "SessionStart", "payload": {"session_id": "host-ses-1", "source": "startup"},
                                   "turns": [], "transcript_lines": 0}, headers=auth, timeout=30)
    assert good.status_code == 200 and good.json()["opened"]
    with open_service(world["target"]) as service:
        row = service.store.query_one("SELECT agent_id, user_id, ended_at FROM host_sessions WHERE host_session_id = 'host-ses-1'")
        assert (row["agent_id"], row["user_id"], row["ended_at"]) == ("assistant", "alice", None)
