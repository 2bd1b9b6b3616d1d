"""search_log.origin: who made each search (model, host, admin, eval), never offered to the model."""

from __future__ import annotations

import json

import pytest

from admin_ui.data import search as explorer
from memory_core.adapters.base import MemoryRuntime
from memory_core.adapters.identity import Identity
from memory_core.errors import InvalidInputError
from tests.helpers import write


def origins(service):
    return [r["origin"] for r in service.store.query("SELECT origin FROM search_log ORDER BY seq")]


def test_each_path_logs_its_origin(service, alice):
    write(alice, "The user prefers concise answers.", attribute="answer_style")
    assert alice.call_tool("memory_search", {"query": "answer style"})["ok"]
    runtime = MemoryRuntime(service, framework="testhost", trigger_mode="hybrid")
    session = runtime.open(Identity(agent_id="assistant", user_id="alice", session_id="h1"))
    runtime.host_search(session, "How should you answer me?")
    form = explorer.SearchForm("assistant", "alice", "answer style", [], None, None, "", 5, False, None, None)
    first_admin = explorer.run_search(service, form)
    service.replay_search(first_admin.search_id)
    service.search(agent_id="assistant", user_id="alice", query="answers", origin="eval")
    service.search(agent_id="assistant", user_id="alice", query="answers")  # a direct API call says nothing
    assert origins(service) == ["model", "host", "admin", "admin", "eval", None]
    host = service.store.query_one("SELECT session_id FROM search_log WHERE origin = 'host'")
    assert host["session_id"] == "h1"


def test_origin_is_not_part_of_the_models_tool_schema(service, alice):
    (schema,) = [s for s in service.tool_schemas() if s["name"] == "memory_search"]
    assert "origin" not in json.dumps(schema)
    result = alice.call_tool("memory_search", {"query": "x", "origin": "admin"})
    assert not result["ok"] and result["error"]["code"] == "invalid_input"  # unknown argument refused
    assert origins(service) == []


def test_an_unknown_origin_is_refused(service):
    with pytest.raises(InvalidInputError):
        service.search(agent_id="assistant", user_id="alice", query="answers", origin="robot")
    assert origins(service) == []


def test_concurrent_calls_keep_their_own_origin(service, alice):
    import threading

    runtime = MemoryRuntime(service, framework="testhost", trigger_mode="hybrid")
    session = runtime.open(Identity(agent_id="assistant", user_id="alice", session_id="h2"))
    write(alice, "The user prefers concise answers.", attribute="answer_style")

    def model():
        for _ in range(5):
            session.call_tool("memory_search", {"query": "concise answers"})

    def host():
        for _ in range(5):
            runtime.host_search(session, "concise answers")

    threads = [threading.Thread(target=model), threading.Thread(target=host)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    rows = service.store.query("SELECT origin, COUNT(*) AS n FROM search_log WHERE session_id = 'h2' GROUP BY origin")
    assert {r["origin"]: r["n"] for r in rows} == {"model": 5, "host": 5}
