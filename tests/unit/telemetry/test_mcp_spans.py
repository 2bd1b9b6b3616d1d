"""MCP tool calls through the official SDK client: one trace from the host's span to the pipeline stages.

The server runs in this process (the SDK's in-memory transport) so the test's exporter sees both
sides. The MCP SDK makes its own ``tools/call`` span (always to the global provider, hence the
``global_provider`` fixture); the service's spans go to the same provider (``tracer_provider=None``
means the global one) and nest under it.
"""

from __future__ import annotations

import threading

import anyio
from opentelemetry import trace

from memory_core import MemoryService
from memory_core.mcp.memory_session import McpMemorySession, Principal
from memory_core.mcp.protocol import build_server
from memory_core.retrieve.retriever import default_stages
from tests.fakes import HashingEmbedder


def test_mcp_tool_calls_are_spans_in_the_hosts_trace_down_to_each_stage(global_provider, store_target, clock, settings):
    from mcp import Client

    _, exporter = global_provider
    service = MemoryService.open(store_target, settings, clock=clock, embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    memory = McpMemorySession(service, Principal("assistant", "alice"))
    seen: dict = {}

    async def conversation() -> None:
        server = build_server(memory, anyio.CapacityLimiter(4))
        with trace.get_tracer("the host").start_as_current_span("host agent turn"):
            async with Client(server) as client:
                seen["write"] = await client.call_tool("memory_write", {
                    "type": "semantic", "content": "The user's bike is a green Brompton."})
                seen["search"] = await client.call_tool("memory_search", {"query": "which bike does the user ride"})
                seen["refused"] = await client.call_tool("memory_get", {"record_id": "mem_0000000000000000"})

    # On a thread of its own: earlier tests in the same run (the browser tests' session-long
    # Playwright) leave an event loop running on the main thread, where anyio.run refuses to start.
    failures: list[BaseException] = []

    def drive() -> None:
        try:
            anyio.run(conversation)
        except BaseException as exc:  # handed to the test's thread below
            failures.append(exc)

    try:
        runner = threading.Thread(target=drive, name="mcp-conversation")
        runner.start()
        runner.join()
    finally:
        memory.end()
        service.close()
    if failures:
        raise failures[0]

    assert not seen["write"].is_error and seen["refused"].is_error
    spans = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}
    host = next(s for s in spans if s.name == "host agent turn")
    assert {s.context.trace_id for s in spans} == {host.context.trace_id}

    def chain(span) -> list[str]:
        names = []
        while span is not None:
            names.append(span.name)
            span = by_id.get(span.parent.span_id) if span.parent else None
        return names

    stage = next(s for s in spans if s.name == "search_stage gate")
    assert chain(stage) == ["search_stage gate", "search_memory", "execute_tool memory_search", "tools/call memory_search",
                            "host agent turn"]
    search = next(s for s in spans if s.name == "search_memory")
    assert len([s for s in spans if s.parent and s.parent.span_id == search.context.span_id]) == len(default_stages())
    assert chain(next(s for s in spans if s.name == "upsert_memory"))[:3] == [
        "upsert_memory", "execute_tool memory_write", "tools/call memory_write"]
    tool = next(s for s in spans if s.name == "execute_tool memory_search")
    assert tool.attributes["gen_ai.conversation.id"] == memory.id
    assert tool.attributes["gen_ai.memory.record.count"] == len(seen["search"].structured_content["results"]) == 1
    refused = next(s for s in spans if s.name == "execute_tool memory_get")
    assert refused.status.status_code.name == "ERROR" and refused.attributes["error.type"] == "not_found"
    # no memory text on any span, the MCP SDK's included
    for span in spans:
        for value in span.attributes.values():
            assert "Brompton" not in str(value) and "which bike" not in str(value)
