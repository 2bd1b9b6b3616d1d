"""The CrewAI adapter: memory tools on an agent, lifecycle on a crew.

Usage (docs/adapters.md has the whole contract)::

    memory = CrewAIMemory(service, trigger_mode="hybrid")
    memory.equip(assistant, agent_id="assistant")     # tools + policy; the explicit agent id
    crew = Crew(agents=[assistant], tasks=[Task(description="{user_message}", ...)])
    memory.attach(crew)                                # kickoff callbacks
    crew.kickoff(inputs={"user_id": "alice", "session_id": "s-1", "user_message": "..."})
    memory.end_session("s-1")                          # a chat spans kickoffs: the host ends it

Identity: the agent id is the one given to :meth:`CrewAIMemory.equip` for the crew's one
memory-equipped agent (a CrewAI role is display text, never used as an id); the user id, session
id and optional project id are the kickoff inputs ``user_id``, ``session_id`` and ``project_id``.
The user's message for this turn is the input ``user_message`` (name configurable).

Events: ``before_kickoff`` opens the session and records the user turn; CrewAI's global
``after_llm_call`` hook records each text reply of an equipped agent, ``after_tool_call`` the
results of its non-memory tools; :meth:`end_session` ends the session. In auto/hybrid mode the host's
search runs in ``before_kickoff`` and its non-empty result is appended, as an assistant tool call
and a tool message, to the agent's messages on its first model call of the kickoff (after the
system prompt and the task prompt, which stay untouched). crewai is imported here only.
"""

from __future__ import annotations

import copy
import json
import threading
import weakref
from typing import TYPE_CHECKING, Any

from ..errors import FrameworkUnavailableError, IdentityError
from .base import AUTO_CALL_PREFIX, MEMORY_TOOL_NAMES, Listener, MemoryRuntime, drop_null_arguments, format_tool_result
from .identity import require_agent_id, require_identity
from .modes import SEARCH_TOOL, TriggerMode

try:
    from crewai.hooks import register_after_llm_call_hook, register_after_tool_call_hook, register_before_llm_call_hook
    from crewai.tools import BaseTool
    from pydantic import BaseModel, ConfigDict, PrivateAttr
except ImportError as exc:  # pragma: no cover - exercised only where the extra is missing
    raise FrameworkUnavailableError(
        "the CrewAI adapter needs the crewai extra: pip install 'agent-memory[crewai]'", missing=str(exc)
    ) from exc

if TYPE_CHECKING:
    from ..service import MemoryService, Session

FRAMEWORK = "crewai"
_SOURCE = "CrewAI kickoff inputs"


def _args_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A pydantic class whose JSON schema is the core's schema verbatim. It declares no fields, so
    CrewAI passes the model's arguments through and the core validates them (structured errors)."""

    class MemoryToolArguments(BaseModel):
        model_config = ConfigDict(extra="allow")

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return copy.deepcopy(schema)

    MemoryToolArguments.__name__ = MemoryToolArguments.__qualname__ = "".join(p.title() for p in name.split("_")) + "Arguments"
    return MemoryToolArguments


class MemoryTool(BaseTool):
    """One memory tool for one equipped CrewAI agent."""

    _memory: Any = PrivateAttr()
    _agent: Any = PrivateAttr()

    def _run(self, **arguments: Any) -> str:
        session = self._memory.session_for(self._agent)
        return format_tool_result(self._memory.runtime.call_tool(session, self.name, drop_null_arguments(arguments)))


class CrewAIMemory:
    """Long-term memory for CrewAI crews."""

    framework = FRAMEWORK

    def __init__(self, service: "MemoryService", *, trigger_mode: TriggerMode | str | None = None,
                 user_message_key: str = "user_message", listeners: tuple[Listener, ...] | list[Listener] = (),
                 ambient: bool | None = None) -> None:
        self.runtime = MemoryRuntime(service, framework=FRAMEWORK, trigger_mode=trigger_mode, listeners=listeners,
                                     ambient=ambient)
        self.user_message_key = user_message_key
        self._agent_ids: dict[str, str] = {}          # CrewAI agent id (uuid) -> memory agent id
        self._crews: dict[str, "Session | None"] = {}  # crew id -> session of its running kickoff
        self._pending: dict[str, dict[str, Any]] = {}  # crew id -> host search result not yet appended
        self._applied: dict[str, str] = {}  # crew id -> the profile block last put in its system message
        self._lock = threading.RLock()
        _register_hooks(self)

    @property
    def trigger_mode(self) -> TriggerMode:
        return self.runtime.trigger_mode

    def policy(self) -> str:
        """The memory-use policy text this adapter appends to an equipped agent's backstory."""
        return self.runtime.policy()

    # -- setup ----------------------------------------------------------------------------------

    def tools_for(self, agent: Any) -> list[MemoryTool]:
        """The memory tools for this trigger mode, bound to ``agent``."""
        tools = []
        for schema in self.runtime.tool_schemas():
            tool = MemoryTool(name=schema["name"], description=schema["description"],
                              args_schema=_args_model(schema["name"], schema["input_schema"]))
            tool._memory, tool._agent = self, agent
            tools.append(tool)
        return tools

    def equip(self, agent: Any, *, agent_id: str) -> Any:
        """Give ``agent`` the memory tools and the memory-use policy, acting as memory agent ``agent_id``."""
        require_agent_id("CrewAIMemory.equip", agent_id)
        with self._lock:
            self._agent_ids[str(agent.id)] = agent_id
        agent.tools = [*[t for t in (agent.tools or []) if t.name not in MEMORY_TOOL_NAMES], *self.tools_for(agent)]
        policy = self.policy()
        if policy not in (agent.backstory or ""):
            agent.backstory = f"{agent.backstory}\n\n{policy}" if agent.backstory else policy
        return agent

    def attach(self, crew: Any) -> Any:
        """Hook the crew's kickoff into the memory lifecycle (it must have one equipped agent)."""
        self._memory_agent(crew)
        with self._lock:
            self._crews.setdefault(str(crew.id), None)
        crew.before_kickoff_callbacks = [*crew.before_kickoff_callbacks, self._before_kickoff(crew)]
        crew.after_kickoff_callbacks = [*crew.after_kickoff_callbacks, self._after_kickoff(crew)]
        return crew

    def _memory_agent(self, crew: Any) -> tuple[Any, str]:
        equipped = [(agent, self._agent_ids[str(agent.id)]) for agent in crew.agents if str(agent.id) in self._agent_ids]
        if len(equipped) != 1:
            raise IdentityError(
                f"a crew attached to memory needs exactly one agent equipped with CrewAIMemory.equip (found {len(equipped)}); "
                "its agent id is the memory principal", source="CrewAI crew",
            )
        return equipped[0]

    # -- lifecycle ------------------------------------------------------------------------------

    def _before_kickoff(self, crew: Any):
        def before_kickoff(inputs: dict[str, Any] | None) -> dict[str, Any] | None:
            inputs = inputs or {}
            _, agent_id = self._memory_agent(crew)
            identity = require_identity(
                _SOURCE, agent_id=agent_id, user_id=inputs.get("user_id"), session_id=inputs.get("session_id"),
                project_id=inputs.get("project_id"),
                keys={"user_id": "inputs['user_id']", "session_id": "inputs['session_id']"},
            )
            session = self.runtime.open(identity)
            message = inputs.get(self.user_message_key)
            with self._lock:
                self._crews[str(crew.id)] = session
                self._pending.pop(str(crew.id), None)
            if isinstance(message, str):
                self.runtime.record_turn(session, "user", message)
                result = self.runtime.host_search(session, message)
                if result is not None:
                    with self._lock:
                        self._pending[str(crew.id)] = result
            return inputs

        return before_kickoff

    def _after_kickoff(self, crew: Any):
        def after_kickoff(output: Any) -> Any:
            with self._lock:
                self._crews[str(crew.id)] = None
                self._pending.pop(str(crew.id), None)
            return output

        return after_kickoff

    def end_session(self, session_id: str) -> str | None:
        """End the conversation: fires ``session_ended`` and queues extraction; returns the run id."""
        return self.runtime.end(session_id)

    def session_for(self, agent: Any) -> "Session":
        """The session of the kickoff ``agent`` is running in (IdentityError outside an attached kickoff)."""
        crew = getattr(agent, "crew", None)
        with self._lock:
            session = self._crews.get(str(crew.id)) if crew is not None else None
        if session is None:
            raise IdentityError("a memory tool was called outside the kickoff of a crew attached with CrewAIMemory.attach",
                                source="CrewAI crew")
        return session

    # -- hook bodies (called by the module's global CrewAI hooks) -------------------------------

    def _running_session(self, context: Any) -> "Session | None":
        agent, crew = getattr(context, "agent", None), getattr(context, "crew", None)
        if agent is None or crew is None or str(getattr(agent, "id", "")) not in self._agent_ids:
            return None
        with self._lock:
            return self._crews.get(str(crew.id))

    def before_llm_call(self, context: Any) -> None:
        """Put the session's ambient profile at the end of the system message (every call, the same
        text), record the first call's prefix, and append the host's pending search result once."""
        session = self._running_session(context)
        if session is None:
            return
        self._apply_profile(session, context)
        with self._lock:
            result = self._pending.pop(str(context.crew.id), None)
        if result is None:
            return
        call_id = f"{AUTO_CALL_PREFIX}{result['search_id']}"
        arguments = json.dumps({"query": result["explanation"]["query"]}, ensure_ascii=False)
        context.messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": SEARCH_TOOL, "arguments": arguments}}]})
        context.messages.append({"role": "tool", "tool_call_id": call_id, "name": SEARCH_TOOL, "content": format_tool_result(result)})

    def _apply_profile(self, session: "Session", context: Any) -> None:
        # The policy is already in the system prompt (the equipped agent's backstory); the profile
        # is per session, so it is added here, after the policy, to the system message CrewAI
        # rebuilt for this kickoff (a message that already ends with it is left alone).
        profile = self.runtime.profile_text(session)
        messages = context.messages
        crew_id = str(context.crew.id)
        index = next((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "system"), None)
        if profile:
            if index is None:
                messages.insert(0, {"role": "system", "content": profile})
                index = 0
            else:
                text = str(messages[index].get("content") or "")
                with self._lock:
                    previous = self._applied.get(crew_id)
                if previous and previous != profile and text.endswith(previous):
                    # a record was forgotten mid-kickoff: its erased block replaces the old one
                    text = text[: -len(previous)].rstrip("\n")
                if not text.endswith(profile):
                    messages[index] = {**messages[index], "content": f"{text}\n\n{profile}" if text else profile}
            with self._lock:
                self._applied[crew_id] = profile
        system_text = str(messages[index].get("content") or "") if index is not None else ""
        self.runtime.note_model_call(session, system_text, lambda: _tool_definitions(getattr(context.agent, "tools", None)))

    def after_llm_call(self, context: Any) -> None:
        """Record a text reply of the equipped agent as an assistant turn."""
        session = self._running_session(context)
        if session is not None and isinstance(context.response, str):
            self.runtime.record_turn(session, "assistant", context.response)

    def after_tool_call(self, context: Any) -> None:
        """Record the result of a non-memory tool of the equipped agent as a tool turn."""
        session = self._running_session(context)
        if session is not None and context.tool_name not in MEMORY_TOOL_NAMES and context.tool_result is not None:
            self.runtime.record_turn(session, "tool", f"{context.tool_name}: {context.tool_result}")


def _tool_definitions(tools: Any) -> list[dict[str, Any]]:
    """An agent's tools as name, description and JSON-schema parameters (for the record)."""
    out = []
    for tool in tools or []:
        schema = getattr(tool, "args_schema", None)
        try:
            parameters = schema.model_json_schema() if schema is not None else {}
        except Exception:  # noqa: BLE001 - a tool whose schema cannot be rendered: keep its name
            parameters = {}
        out.append({"name": getattr(tool, "name", str(tool)), "description": getattr(tool, "description", ""),
                    "parameters": parameters})
    return out


# CrewAI's model and tool hooks are process-wide; one set is registered, and it forwards to every
# live adapter (each ignores crews it was not attached to).
_ADAPTERS: "weakref.WeakSet[CrewAIMemory]" = weakref.WeakSet()
_hooks_registered = False
_hooks_lock = threading.Lock()


def _register_hooks(adapter: CrewAIMemory) -> None:
    global _hooks_registered
    with _hooks_lock:
        _ADAPTERS.add(adapter)
        if _hooks_registered:
            return

        def before_llm(context: Any) -> None:
            for each in list(_ADAPTERS):
                each.before_llm_call(context)

        def after_llm(context: Any) -> None:
            for each in list(_ADAPTERS):
                each.after_llm_call(context)

        def after_tool(context: Any) -> None:
            for each in list(_ADAPTERS):
                each.after_tool_call(context)

        register_before_llm_call_hook(before_llm)
        register_after_llm_call_hook(after_llm)
        register_after_tool_call_hook(after_tool)
        _hooks_registered = True
