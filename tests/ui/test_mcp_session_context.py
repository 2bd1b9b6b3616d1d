"""An MCP session in the admin app's session context view: the instructions and tools the client was
given, and each search it made (issue 25)."""

from memory_core.mcp.memory_session import McpMemorySession, Principal
from tests.ui.conftest import frames_with, service_for, shown_text


def test_an_mcp_session_shows_its_instructions_tools_and_searches(open_page):
    at = open_page("session_context.py", "viewer")
    service = service_for(at)
    memory = McpMemorySession(service, Principal("assistant", "alice"))
    result = memory.call("memory_search", {"query": "what does alice like to eat"})
    assert result["ok"], result
    memory.end()
    at.run()
    at.selectbox(key="context_session_id").set_value(memory.id).run()
    assert not at.exception, [e.value for e in at.exception]
    codes = [c.value for c in at.code]
    assert memory.instructions in codes  # the instructions as the client received them
    tools = frames_with(at, "name", "description")[0]
    assert set(tools["name"]) == {"memory_search", "memory_get", "memory_write", "memory_revise", "memory_forget"}
    text = shown_text(at)
    assert any(f"session {memory.id}" in t and " mcp · tool_only" in t for t in text)
    assert any("the model's own memory_search" in t for t in text)
    assert "what does alice like to eat" in codes


def test_a_session_ended_for_a_dead_server_says_so(open_page):
    """The end reason is shown as plain text next to the end time (a sweep ended it, not its client)."""
    from dataclasses import replace

    from memory_core.mcp import owners

    at = open_page("session_context.py", "viewer")
    service = service_for(at)
    me = owners.this_process()
    memory = McpMemorySession(service, Principal("assistant", "alice"), owner=replace(me, pid=me.pid, process_start="*gone*:1"))
    assert [e.session_id for e in owners.sweep(service, me, idle_s=1800)] == [memory.id]
    at.run()
    at.selectbox(key="context_session_id").set_value(memory.id).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(f"session {memory.id}" in t and f"({owners.REBOOTED})" in t for t in shown_text(at))
