"""Writing the records the ambient tests need, through the real tool surface and host API."""

from __future__ import annotations


def said(session, words: str, content: str, attribute: str, **extra) -> str:
    """The user says ``words``; the agent saves ``content`` as their statement. Returns the record id."""
    session.record_turn("user", words)
    result = session.call_tool("memory_write", {
        "type": "semantic", "content": content, "attribute": attribute, "source_kind": "user_statement",
        "evidence": words, **extra})
    assert result["ok"], result
    return result["record_id"]


def inferred(session, content: str, attribute: str) -> str:
    """The agent concludes ``content`` (an inference, provisional)."""
    result = session.call_tool("memory_write", {"type": "semantic", "content": content, "attribute": attribute,
                                                "source_kind": "agent_inference"})
    assert result["ok"], result
    return result["record_id"]


def from_tool(session, tool_text: str, content: str, attribute: str) -> str:
    """A host tool returned ``tool_text``; the agent saves ``content`` as a tool result."""
    session.record_turn("tool", f"profile_lookup: {tool_text}")
    result = session.call_tool("memory_write", {"type": "semantic", "content": content, "attribute": attribute,
                                                "source_kind": "tool_result", "evidence": tool_text})
    assert result["ok"], result
    return result["record_id"]
