"""One driver per framework so the contract suite can run the same conversation through either.

Each harness builds a real agent of its framework (``create_deep_agent`` with a LangGraph
checkpointer; a CrewAI ``Agent``/``Task``/``Crew``) around that framework's scripted model, plus one
host tool (``lookup_order``) that is not a memory tool, and plays user turns through the
framework's own entry point (``agent.invoke`` / ``crew.kickoff``). :meth:`together` plays one turn
for each of several principals at once, the way each framework runs concurrent work: one graph
invoked from several threads or tasks (Deep Agents), or one crew and copies of it (CrewAI).
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading

import pytest

from memory_core.adapters.script import Script

ORDER_TEXT = "Order 4411 shipped on 2026-03-04 by courier Rapidex."
FRAMEWORKS = ("deepagents", "crewai")
INSTALLED = {name: importlib.util.find_spec(name) is not None for name in FRAMEWORKS}


def framework_params():
    """pytest params for both adapters, each skipped (with the reason) where its framework is missing."""
    return [
        pytest.param(name, marks=pytest.mark.skipif(
            not INSTALLED[name], reason=f"{name} is not installed in this environment; `make test` runs it in its own venv"))
        for name in FRAMEWORKS
    ]


class DeepAgentsHarness:
    framework = "deepagents"

    def __init__(self, service, *, trigger_mode="tool_only", agent_id="assistant", user_id="alice", session_id="ses-1",
                 project_id=None, listeners=(), model=None, ambient=None, script=None):
        from deepagents import create_deep_agent
        from langchain_core.tools import StructuredTool
        from langgraph.checkpoint.memory import InMemorySaver

        from memory_core.adapters.deepagents import DeepAgentsMemory
        from memory_core.adapters.scripted_langchain import ScriptedChatModel

        self.script = script or Script()
        self.memory = DeepAgentsMemory(service, trigger_mode=trigger_mode, listeners=list(listeners), ambient=ambient)
        lookup = StructuredTool.from_function(lambda order_id: ORDER_TEXT, name="lookup_order",
                                              description="Look up an order's shipping status by its id.")
        self.agent = create_deep_agent(model=model or ScriptedChatModel(script=self.script), tools=[lookup],
                                       system_prompt="You are a helpful assistant.", middleware=[self.memory.middleware()],
                                       checkpointer=InMemorySaver())
        self.configurable = {"thread_id": session_id, "agent_id": agent_id, "user_id": user_id}
        if project_id:
            self.configurable["project_id"] = project_id
        self.session_id = session_id

    def tool_definitions(self):
        return [{"name": t.name, "description": t.description, "input_schema": t.args_schema} for t in self.memory.tools()]

    def user_turn(self, text, replies, *, drop=()):
        """Play one user turn; ``drop`` removes identity keys (agent_id, user_id) from the run context."""
        self.script.extend(replies)
        config = {"configurable": {k: v for k, v in self.configurable.items() if k not in drop}}
        result = self.agent.invoke({"messages": [{"role": "user", "content": text}]}, config)
        return result["messages"][-1].text

    def end(self):
        return self.memory.end_session(self.session_id)

    def switch_user(self, user_id):
        """Name another user in the run context from now on (same adapter, same session id)."""
        self.configurable["user_id"] = user_id

    def _config(self, user_id, session_id):
        return {"configurable": {**self.configurable, "user_id": user_id, "thread_id": session_id}}

    def together(self, turns, how="threads"):
        """One turn for each ``(user_id, session_id, text)`` at once; the replies, in order."""
        payloads = [({"messages": [{"role": "user", "content": text}]}, self._config(user, session)) for user, session, text in turns]
        if how == "asyncio":
            async def run_all():
                return await asyncio.gather(*(self.agent.ainvoke(payload, config) for payload, config in payloads))
            results = asyncio.run(run_all())
        else:
            results = run_in_threads([lambda p=p, c=c: self.agent.invoke(p, c) for p, c in payloads])
        return [result["messages"][-1].text for result in results]


class CrewAIHarness:
    framework = "crewai"

    def __init__(self, service, *, trigger_mode="tool_only", agent_id="assistant", user_id="alice", session_id="ses-1",
                 project_id=None, listeners=(), model=None, ambient=None, script=None):
        from crewai import Agent, Crew, Task
        from crewai.tools import BaseTool

        from memory_core.adapters.crewai import CrewAIMemory
        from memory_core.adapters.scripted_crewai import ScriptedLLM

        class LookupOrder(BaseTool):
            name: str = "lookup_order"
            description: str = "Look up an order's shipping status by its id."

            def _run(self, order_id: str) -> str:
                return ORDER_TEXT

        self.script = script or Script()
        self.memory = CrewAIMemory(service, trigger_mode=trigger_mode, listeners=list(listeners), ambient=ambient)
        agent = Agent(role="Assistant", goal="Help the user", backstory="You are a helpful assistant.",
                      llm=model or ScriptedLLM(model="scripted", script=self.script), tools=[LookupOrder()], allow_delegation=False)
        self.memory.equip(agent, agent_id=agent_id)
        task = Task(description="{user_message}", expected_output="A reply to the user.", agent=agent)
        self.crew = self.memory.attach(Crew(agents=[agent], tasks=[task]))
        self.agent, self.agent_id = agent, agent_id
        self.inputs = {"user_id": user_id, "session_id": session_id}
        if project_id:
            self.inputs["project_id"] = project_id
        self.session_id = session_id

    def tool_definitions(self):
        return [{"name": t.name, "description": t.description, "input_schema": t.args_schema.model_json_schema()}
                for t in self.memory.tools_for(self.agent_id)]

    def user_turn(self, text, replies, *, drop=()):
        """Play one user turn; ``drop`` removes identity keys (user_id, session_id) from the kickoff inputs."""
        self.script.extend(replies)
        inputs = {k: v for k, v in self.inputs.items() if k not in drop}
        inputs["user_message"] = text
        return self.crew.kickoff(inputs=inputs).raw

    def end(self):
        return self.memory.end_session(self.session_id)

    def switch_user(self, user_id):
        """Name another user in the kickoff inputs from now on (same adapter, same session id)."""
        self.inputs["user_id"] = user_id

    def together(self, turns, how="threads"):
        """One turn for each ``(user_id, session_id, text)`` at once: the first on this crew, every
        other on a copy of it (CrewAI's way to run kickoffs concurrently); the replies, in order."""
        crews = [self.crew, *(self.crew.copy() for _ in turns[1:])]
        inputs = [{**self.inputs, "user_id": user, "session_id": session, "user_message": text} for user, session, text in turns]
        if how == "asyncio":
            async def run_all():
                return await asyncio.gather(*(crew.kickoff_async(inputs=i) for crew, i in zip(crews, inputs)))
            results = asyncio.run(run_all())
        else:
            results = run_in_threads([lambda c=c, i=i: c.kickoff(inputs=i) for c, i in zip(crews, inputs)])
        return [result.raw for result in results]


def run_in_threads(calls):
    """Run each call in its own thread; their results in order, or the first error raised."""
    results, errors = [None] * len(calls), []

    def run(index, call):
        try:
            results[index] = call()
        except BaseException as exc:  # re-raised in the test's thread below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


HARNESSES = {"deepagents": DeepAgentsHarness, "crewai": CrewAIHarness}


def make_harness(framework, service, **kwargs):
    return HARNESSES[framework](service, **kwargs)
