"""CrewAI's kickoff_async goes through the same callbacks and hooks as kickoff."""

import asyncio

import pytest

from memory_core.adapters.script import Call, Say

from .harness import INSTALLED, make_harness

pytestmark = pytest.mark.skipif(not INSTALLED["crewai"], reason="crewai is not installed here; `make test` runs it in .venv-crewai")


def test_kickoff_async_records_and_writes(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    events = []
    harness = make_harness("crewai", service, trigger_mode="hybrid", listeners=[events.append])
    harness.script.extend([Call(("memory_write", {"type": "semantic", "content": "The user prefers tea.", "attribute": "drink",
                                                  "source_kind": "user_statement", "evidence": "I prefer tea"})), Say("Tea.")])
    output = asyncio.run(harness.crew.kickoff_async(inputs={**harness.inputs, "user_message": "I prefer tea."}))
    assert output.raw == "Tea."
    assert [(e.type, e.role) for e in events] == [("session_started", None), ("turn_completed", "user"), ("turn_completed", "assistant")]
    assert harness.script.requests[1].tool_results("memory_write")[0]["status"] == "confirmed"
