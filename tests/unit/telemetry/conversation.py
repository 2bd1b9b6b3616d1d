"""A short conversation through the tools whose answers must not depend on tracing (no OpenTelemetry import
here: the test without the API imports this module in an interpreter where the package is missing)."""

from __future__ import annotations


def _conversation(service) -> list:
    """A write, a search, a get and a forget; returns the tool results without the per-run ids and timings."""
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    session = service.start_session(agent_id="assistant", user_id="alice")
    written = session.call_tool("memory_write", {"type": "semantic", "content": "The user's bike is a green Brompton."})
    found = session.call_tool("memory_search", {"query": "which bike does the user ride"})
    got = session.call_tool("memory_get", {"record_id": written["record_id"]})
    gone = session.call_tool("memory_forget", {"record_id": written["record_id"], "reason": "asked"})
    return [written["ok"], written["outcome"], [r["content"] for r in found["results"]], got["record"]["content"],
            gone["forgotten"] == [written["record_id"]]]


EXPECTED = [True, "created", ["The user's bike is a green Brompton."], "The user's bike is a green Brompton.", True]
