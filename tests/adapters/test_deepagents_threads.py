"""One Deep Agents graph and one adapter serving two users at once, from two threads: each run's
turns, tool calls and records stay with the principal its own config names."""

from __future__ import annotations

import importlib.util
import threading

import pytest

from memory_core.adapters.script import Call, Say, Script

pytestmark = pytest.mark.skipif(importlib.util.find_spec("deepagents") is None, reason="deepagents is not installed here")


def test_concurrent_runs_keep_their_own_principal(service):
    from deepagents import create_deep_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from memory_core.adapters.deepagents import DeepAgentsMemory
    from memory_core.adapters.scripted_langchain import ScriptedChatModel

    for user in ("alice", "bob"):
        service.grant("assistant", f"user:{user}", read=True, write=True, actor="test")
    memory = DeepAgentsMemory(service, agent_id="assistant")
    agents = {}
    for user in ("alice", "bob"):
        script = Script([
            Call(("memory_write", {"type": "semantic", "content": f"The user's name is {user.title()}.", "attribute": "name",
                                   "source_kind": "user_statement", "evidence": f"My name is {user.title()}"})),
            Say(f"Hello {user.title()}."),
        ] * 5)
        agents[user] = create_deep_agent(model=ScriptedChatModel(script=script), middleware=[memory.middleware()],
                                         checkpointer=InMemorySaver())
    errors = []

    def run(user):
        try:
            for i in range(5):
                config = {"configurable": {"thread_id": f"{user}-{i}", "user_id": user}}
                agents[user].invoke({"messages": [{"role": "user", "content": f"My name is {user.title()}."}]}, config)
                memory.end_session(config)
        except Exception as exc:  # surfaced below with the thread's user
            errors.append((user, exc))

    threads = [threading.Thread(target=run, args=(user,)) for user in ("alice", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    rows = service.store.query("SELECT s.user_id, t.content FROM turns t JOIN sessions s ON s.id = t.session_id WHERE t.role = 'user'")
    assert len(rows) == 10 and all(r["user_id"].title() in r["content"] for r in rows)
    records = service.store.query("SELECT scope_id, content FROM records WHERE type = 'semantic' AND status = 'confirmed'")
    assert {(r["scope_id"], r["content"]) for r in records} == {("alice", "The user's name is Alice."), ("bob", "The user's name is Bob.")}


def test_an_async_run_goes_through_the_same_hooks(service):
    import asyncio

    from deepagents import create_deep_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from memory_core.adapters import memory_policy
    from memory_core.adapters.deepagents import DeepAgentsMemory
    from memory_core.adapters.scripted_langchain import ScriptedChatModel

    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    events = []
    memory = DeepAgentsMemory(service, agent_id="assistant", trigger_mode="hybrid", listeners=[events.append])
    script = Script([
        Call(("memory_write", {"type": "semantic", "content": "The user prefers tea.", "attribute": "drink",
                               "source_kind": "user_statement", "evidence": "I prefer tea"})),
        Say("Tea it is."),
    ])
    agent = create_deep_agent(model=ScriptedChatModel(script=script), middleware=[memory.middleware()], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "async-1", "user_id": "alice"}}
    asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "I prefer tea."}]}, config))
    memory.end_session(config)
    assert [(e.type, e.role) for e in events] == [("session_started", None), ("turn_completed", "user"),
                                                  ("turn_completed", "assistant"), ("session_ended", None)]
    assert memory_policy("hybrid") in script.requests[0].system
    assert script.requests[1].tool_results("memory_write")[0]["status"] == "confirmed"
