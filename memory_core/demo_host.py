"""A scripted host that plays a demo session through the adapter runtime, as a framework would.

The Deep Agents and CrewAI adapters are thin translations of one framework's lifecycle into calls
on :class:`~memory_core.adapters.MemoryRuntime`; this host makes the same calls in the same order
from a seed session, with no framework installed, so the demo store holds sessions recorded the
way an adapter records them:

- the session is opened by the runtime (``session_started`` with the framework and trigger mode,
  and the prompt prefix fixed then: the memory-use policy, the ambient profile when on, the tools);
- each user turn is recorded, then the host's search runs (auto and hybrid; in hybrid with
  host-issued memory on, its decision is logged), and its result, when there is one, is what the
  host appends for the model;
- the first model call records the system text the model received (the host's text, the policy,
  the profile) and the tool list it was offered, exactly as ``note_model_call`` does for the
  adapters;
- the model's memory tool calls go through ``runtime.call_tool`` (a tool the mode does not offer is
  refused, as for a real model); the host's own tool results and the assistant's replies become
  transcript turns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .adapters import Identity, MemoryRuntime, format_tool_result

if TYPE_CHECKING:
    from .demo_seed import AdapterSpec, SessionSpec
    from .service import MemoryService, Session

FRAMEWORK = "demo-host"  # what the session records as its framework: not a real framework's name


class ScriptedHost:
    """One seed session played through a :class:`MemoryRuntime` (open, turns, tool calls, end)."""

    def __init__(self, service: "MemoryService", spec: "SessionSpec") -> None:
        adapter: AdapterSpec = spec.adapter  # type: ignore[assignment]
        self.spec = spec
        self.adapter = adapter
        self.runtime = MemoryRuntime(service, framework=FRAMEWORK, trigger_mode=adapter.trigger_mode,
                                     ambient=adapter.ambient)
        self.session: Session = self.runtime.open(Identity(agent_id=spec.agent, user_id=spec.user, session_id=spec.id,
                                                           project_id=spec.project))
        self.appended: list[str] = []  # the host's search results, as the text appended for the model
        self._called = False

    def offered_tools(self) -> list[dict[str, Any]]:
        """The tools of a model call: the memory tools of this mode, then the host's own."""
        memory = [{"name": t["name"], "description": t["description"], "parameters": t["input_schema"]}
                  for t in self.runtime.tool_schemas()]
        host = [{"name": t.name, "description": t.description, "parameters": {}} for t in self.adapter.host_tools]
        return memory + host

    def system_text(self) -> str:
        """The system text of every model call: the host's text, then the policy and profile."""
        prefix = self.runtime.prefix(self.session)
        return f"{self.adapter.system}\n\n{prefix}" if self.adapter.system else prefix

    def model_call(self) -> None:
        """A model call happens: the first one records what the model was shown."""
        if not self._called:
            self._called = True
            self.runtime.note_model_call(self.session, self.system_text(), self.offered_tools)

    def user(self, text: str) -> None:
        """A user message: recorded, then the host's search for it, then the model is called."""
        self.runtime.record_turn(self.session, "user", text)
        result = self.runtime.host_search(self.session, text)
        if result is not None:
            self.appended.append(format_tool_result(result))
        self.model_call()

    def turn(self, role: str, text: str) -> None:
        """An assistant reply or a host tool's result (``name: result``) reaches the transcript."""
        self.runtime.record_turn(self.session, role, text)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The model calls a memory tool."""
        return self.runtime.call_tool(self.session, name, arguments)

    def end(self) -> str | None:
        """End the session (``session_ended``); the queued extraction run's id."""
        return self.runtime.end(self.session.id)
