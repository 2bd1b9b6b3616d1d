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


def _config(person):
    return {"configurable": {"thread_id": person.session_id, "user_id": person.user_id}}


def _message(text):
    return {"messages": [{"role": "user", "content": text}]}


@pytest.mark.parametrize("how", ["batch", "abatch"])
def test_batch_runs_keep_their_own_principal(service, how):
    """``batch``/``abatch`` run one graph for several configs at once (a thread pool, or tasks)."""
    import asyncio

    from deepagents import create_deep_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from memory_core.adapters.deepagents import DeepAgentsMemory
    from memory_core.adapters.scripted_langchain import ScriptedChatModel

    from .concurrency import PEOPLE, UsersModel, assert_nothing_crossed, grant_everyone

    grant_everyone(service)
    model = UsersModel(parties=2)
    memory = DeepAgentsMemory(service, agent_id="assistant", trigger_mode="hybrid")
    agent = create_deep_agent(model=ScriptedChatModel(script=model.script()), middleware=[memory.middleware()],
                              checkpointer=InMemorySaver())
    people = [PEOPLE["alice"], PEOPLE["bob"]]
    for say in ("tell", "ask"):
        payloads, configs = [_message(getattr(p, say)()) for p in people], [_config(p) for p in people]
        if how == "batch":
            results = agent.batch(payloads, configs)
        else:
            results = asyncio.run(agent.abatch(payloads, configs))
        expected = [p.noted() if say == "tell" else p.answer([p.bank]) for p in people]
        assert [r["messages"][-1].text for r in results] == expected
    assert_nothing_crossed(service, model, people)


def test_one_middleware_shared_by_two_graphs(service):
    """The same middleware object in two graphs (each with its own model and checkpointer), both
    running at once for different users."""
    from deepagents import create_deep_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from memory_core.adapters.deepagents import DeepAgentsMemory
    from memory_core.adapters.scripted_langchain import ScriptedChatModel

    from .concurrency import PEOPLE, UsersModel, assert_nothing_crossed, grant_everyone
    from .harness import run_in_threads

    grant_everyone(service)
    model = UsersModel(parties=2)
    memory = DeepAgentsMemory(service, agent_id="assistant")
    middleware = memory.middleware()
    graphs = [create_deep_agent(model=ScriptedChatModel(script=model.script()), middleware=[middleware],
                                checkpointer=InMemorySaver()) for _ in range(2)]
    people = [PEOPLE["alice"], PEOPLE["bob"]]
    for say in ("tell", "ask"):
        run_in_threads([lambda g=g, p=p: g.invoke(_message(getattr(p, say)()), _config(p)) for g, p in zip(graphs, people)])
    assert_nothing_crossed(service, model, people)
