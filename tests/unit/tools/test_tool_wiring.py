"""The tool surface is composed explicitly and handed to the service; the call's origin is an argument.

No registry fills itself at import and no context variable carries who made the call: a service
built with its own :class:`ToolRegistry` offers exactly those tools, two services in one process
offer what each was given, and concurrent calls on one session each see their own origin.
"""

import threading

from pydantic import BaseModel, ConfigDict

from memory_core import MemoryService
from memory_core.embed.hashing import HashingEmbedder
from memory_core.tools import Tool, ToolRegistry, build_tools


class EchoInput(BaseModel):
    """Say something back."""

    model_config = ConfigDict(extra="forbid")
    text: str


def test_a_service_offers_the_tools_it_was_given(store_target, settings, clock):
    seen = []

    def echo(session, args, *, origin):
        seen.append((session.agent_id, args.text, origin))
        return {"ok": True, "echo": args.text}

    registry = ToolRegistry([Tool.of("echo", EchoInput, echo)])
    with MemoryService.open(store_target, settings, clock=clock, embedder=HashingEmbedder(), tools=registry) as service:
        service.grant("assistant", "user:alice", read=True, write=True, actor="test")
        session = service.start_session(agent_id="assistant", user_id="alice")
        assert [s["name"] for s in session.tool_schemas()] == ["echo"]
        assert session.call_tool("echo", {"text": "hi"}, origin="host") == {"ok": True, "echo": "hi"}
        refused = session.call_tool("memory_search", {"query": "anything"})
        assert refused["error"]["code"] == "unknown_tool"
    assert seen == [("assistant", "hi", "host")]


def test_the_default_tools_are_built_per_service_not_shared(service):
    other = build_tools()
    assert service.tools is not other and service.tools.names() == other.names()
    assert other.names() == ["memory_write", "memory_get", "memory_revise", "memory_forget", "memory_search"]


def test_refusals_reach_the_hooks_of_the_registry_that_ran_the_call(service):
    heard = []
    registry = ToolRegistry([Tool.of("echo", EchoInput, lambda session, args, *, origin: {"ok": True})],
                            refusal_hooks=[lambda session, name, arguments, error: heard.append((name, error.code))])
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    session = service.start_session(agent_id="assistant", user_id="alice")
    assert registry.call(session, "echo", {"text": 3})["error"]["code"] == "invalid_input"
    assert heard == [("echo", "invalid_input")]


def test_concurrent_calls_on_one_session_each_log_their_own_origin(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    session = service.start_session(agent_id="assistant", user_id="alice")
    start = threading.Barrier(4)
    results = {}

    def search(origin):
        start.wait()
        results[origin] = session.call_tool("memory_search", {"query": f"asked by {origin}"}, origin=origin)

    threads = [threading.Thread(target=search, args=(origin,)) for origin in ("model", "host", "admin", "eval")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for origin, result in results.items():
        assert result["ok"], result
        row = service.store.query_one("SELECT origin FROM search_log WHERE id = ?", (result["search_id"],))
        assert row["origin"] == origin
