"""Fuzzed MCP tool calls through the SDK's own client, connected in-process to our server: every call
is answered (a tool result, or a protocol error for an unknown tool), never a crash or an internal
error; a refused call writes no record; the store stays whole and the session keeps working.

Arguments mix the tools' real fields with wrong types, extra keys (identity among them), odd dates,
right-to-left text and NUL. Lone surrogates cannot be sent by the SDK's client (it cannot encode
them); tests/mcp/test_http.py sends them as JSON escapes on the wire instead.
"""

from __future__ import annotations

import anyio
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError

from memory_core import FixedClock, MemoryService
from memory_core.mcp.memory_session import McpMemorySession, Principal
from memory_core.mcp.protocol import build_server
from memory_core.settings import default_settings
from memory_core.store.doctor import run_doctor
from tests.fakes import HashingEmbedder
from tests.mcp.servers import run_async

TOOLS = ["memory_search", "memory_get", "memory_write", "memory_revise", "memory_forget"]
FIELDS = ["query", "record_id", "type", "content", "attribute", "evidence", "source_kind", "target", "about", "reason",
          "action", "limit", "valid_from", "valid_until", "event_at", "time_from", "time_to", "mentions", "types",
          "user_id", "agent_id", "scope", "store", "session_id"]
text = st.one_of(st.text(st.characters(exclude_categories=["Cs"]), max_size=40), st.sampled_from(["", " ", "\x00", "a\x00b", "שלום עולם",
                                                         "‮evil‬", "mem_0000000000000000", "user:bob", "../../etc",
                                                         "0001-01-01T00:00+01:00", "9999-12-31T23:59:59-00:01",
                                                         "2026-02-30", "semantic", "personal", "update"]))
value = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True), text),
                     lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=3)),
                     max_leaves=8)
arguments = st.dictionaries(st.sampled_from(FIELDS) | text, value, max_size=6)
calls = st.lists(st.tuples(st.sampled_from(TOOLS + ["memory_delete_all", "", "MEMORY_SEARCH"]), arguments),
                 min_size=1, max_size=6)


@hsettings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(batch=calls)
def test_fuzzed_calls_are_answered_and_leave_the_store_whole(tmp_path_factory, batch):
    path = tmp_path_factory.mktemp("fuzz") / "m.sqlite"
    service = MemoryService.open(path, default_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    try:
        service.grant("assistant", "user:alice", read=True, write=True, actor="t")
        memory = McpMemorySession(service, Principal("assistant", "alice"))
        outcomes = []

        async def run():
            async with Client(build_server(memory, anyio.CapacityLimiter(2))) as client:
                for name, args in batch:
                    before = service.store.scalar("SELECT COUNT(*) FROM records")
                    try:
                        result = await client.call_tool(name, args)
                    except MCPError as exc:
                        assert name not in TOOLS and exc.code == -32602, (name, exc)
                        outcomes.append("protocol error")
                        continue
                    body = result.structured_content
                    assert isinstance(body, dict) and body["ok"] is (not result.is_error)
                    if result.is_error:
                        assert body["error"]["code"] != "internal_error", body
                        assert service.store.scalar("SELECT COUNT(*) FROM records") == before
                    outcomes.append(body["error"]["code"] if result.is_error else "ok")
                after = await client.call_tool("memory_search", {"query": "anything"})
                assert not after.is_error  # the session still works

        run_async(run)
        assert len(outcomes) == len(batch)
        assert run_doctor(service.store, service.settings).ok
        memory.end()
    finally:
        service.close()
