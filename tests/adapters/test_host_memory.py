"""The adapter contract for hybrid mode with host-issued memory (docs/host-memory.md), run against
both adapters with their real frameworks and scripted models."""

from __future__ import annotations

import json

import pytest

from memory_core.adapters.base import AUTO_CALL_PREFIX
from memory_core.adapters.script import Call, Say
from memory_core.errors import HostMemoryNotQualifiedError
from memory_core.hostmem import decisions_for, run_fitness
from memory_core.settings import default_settings

from .harness import framework_params, make_harness

pytestmark = pytest.mark.parametrize("framework", framework_params())

DINNER = "Can you suggest something I could cook for dinner tonight?"
VEGAN = "Alice is vegan: she eats no meat, fish, eggs or dairy."


@pytest.fixture
def settings():
    return default_settings(host_memory={"enabled": True})


@pytest.fixture
def store(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    service.write_system_fact(scope="user:alice", content=VEGAN, attribute="diet", actor="test")
    return service


@pytest.fixture
def qualified(store):
    assert run_fitness(store, actor="test").passed
    return store


def host_messages(request):
    return [m for m in request.messages if m.get("role") == "tool" and m.get("name") == "memory_search"]


def test_hybrid_with_host_memory_is_refused_without_a_fitness_result(framework, store):
    with pytest.raises(HostMemoryNotQualifiedError, match="agent-memory fitness run"):
        make_harness(framework, store, trigger_mode="hybrid")
    make_harness(framework, store, trigger_mode="auto")  # auto keeps its plain host search
    make_harness(framework, store, trigger_mode="tool_only")


def test_an_ordinary_turn_gets_nothing_and_is_logged(framework, qualified):
    harness = make_harness(framework, qualified, trigger_mode="hybrid")
    harness.user_turn("Hi there!", [Say("Hello!")])
    assert host_messages(harness.script.requests[0]) == []
    (row,) = decisions_for(qualified, "ses-1")
    assert row["message"] is None and row["admitted_ids"] == [] and row["turn"] == 0
    assert qualified.store.scalar("SELECT COUNT(*) FROM search_log WHERE session_id = 'ses-1'") == 0


def test_a_turn_that_needs_memory_gets_it_as_a_tool_result_after_the_user_message(framework, qualified):
    harness = make_harness(framework, qualified, trigger_mode="hybrid")
    harness.user_turn("Hi there!", [Say("Hello!")])
    harness.user_turn(DINNER, [Call(("memory_search", {"query": "favourite cuisine"})), Say("A chickpea curry.")])
    first = harness.script.requests[1]
    (appended,) = host_messages(first)
    rows = decisions_for(qualified, "ses-1")
    assert [r["turn"] for r in rows] == [0, 2], "one decision per user turn, numbered as in the transcript"
    row = rows[-1]
    assert appended["content"] == row["message"], "the logged message is exactly what the model read"
    assert appended["tool_call_id"] == f"{AUTO_CALL_PREFIX}{row['id']}"
    assert VEGAN in json.loads(appended["content"])["results"][0]["content"]
    assert first.messages[-1]["role"] == "tool" and DINNER in first.messages[-3]["content"]  # CrewAI wraps it in the task
    # the model's own follow-up search still works in hybrid
    assert harness.script.requests[2].tool_results("memory_search")[-1]["ok"]
    logged = qualified.store.query("SELECT id FROM search_log WHERE session_id = 'ses-1' ORDER BY seq")
    assert set(row["search_ids"]) < {r["id"] for r in logged} and len(logged) == len(row["search_ids"]) + 1
    # nothing from the store entered the prefix
    assert len({(r.system, repr(sorted(r.tools, key=lambda t: t["name"]))) for r in harness.script.requests}) == 1
    assert all(VEGAN not in r.system for r in harness.script.requests)


def test_a_shared_project_session_does_not_get_the_users_private_facts(framework, qualified):
    qualified.grant("assistant", "project:apollo", read=True, write=True, actor="test")
    harness = make_harness(framework, qualified, trigger_mode="hybrid", project_id="apollo")
    harness.user_turn("Plan the team lunch for the launch, something we can all cook.", [Say("Pasta night.")])
    assert host_messages(harness.script.requests[0]) == []
    (row,) = decisions_for(qualified, "ses-1")
    assert row["gaps"] and row["admitted_ids"] == []
    assert any("shared project session" in c["reason"] for c in row["candidates"])
