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

Kickoffs, not objects: CrewAI copies a crew's callbacks, agents' tools and hooks into every
``crew.copy()`` (and so into ``kickoff_for_each`` and the async variants), and its hooks are
process-wide, so nothing here is bound to a crew, agent or tool object. Each kickoff is known by
the context object CrewAI creates for it (``get_crew_context()``, carried into the threads CrewAI
runs tools and tasks in): CrewAI's execution-start hook notes which crew object is starting,
``before_kickoff`` gives the kickoff its identity from the inputs (and a copy the attached crew's
templates, see ``crewai_parts``), and every hook and memory tool call looks up the kickoff it runs
in. A second kickoff of one crew instance while its first runs is refused (CrewAI kickoffs are not
reentrant; copy the crew), and an equipped agent running outside an attached kickoff stops with
:class:`KickoffRefusedError`.

Events: ``before_kickoff`` opens the session and records the user turn; CrewAI's global
``after_llm_call`` hook records each text reply of an equipped agent, ``after_tool_call`` the
results of its non-memory tools; :meth:`end_session` ends the session. In auto/hybrid mode the host's
search runs in ``before_kickoff`` and its non-empty result is appended, as an assistant tool call
and a tool message, to the agent's messages on its first model call of the kickoff (after the
system prompt and the task prompt, which stay untouched). crewai is imported here only.
"""

from __future__ import annotations

import json
import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import FrameworkUnavailableError, IdentityError, InvalidInputError
from .base import AUTO_CALL_PREFIX, MEMORY_TOOL_NAMES, Listener, MemoryRuntime, drop_null_arguments, format_tool_result
from .identity import Identity, require_agent_id, require_identity
from .modes import SEARCH_TOOL, TriggerMode

try:
    from crewai.hooks import HookAborted
    from crewai.utilities.crew.crew_context import get_crew_context
except ImportError as exc:  # pragma: no cover - exercised only where the extra is missing
    raise FrameworkUnavailableError(
        "the CrewAI adapter needs the crewai extra: pip install 'agent-memory[crewai]'", missing=str(exc)
    ) from exc

from .crewai_parts import (MemoryTool, args_model, never_cache, refusal, register_hooks, restore_templates,
                           tool_definitions)

if TYPE_CHECKING:
    from ..service import MemoryService, Session

FRAMEWORK = "crewai"
_SOURCE = "CrewAI kickoff inputs"


class KickoffRefusedError(IdentityError, HookAborted):
    """A kickoff memory cannot tell the identity of, stopped from a CrewAI hook (caught as IdentityError)."""


@dataclass
class _Kickoff:
    """One running kickoff: CrewAI's context object for it (weakly), its crew and identity."""

    marker: "weakref.ref[Any]"
    crew_id: str
    crew: Any                               # the crew object running it (the attached crew or a copy)
    identity: Identity | None = None        # set by before_kickoff from the kickoff's inputs
    pending: dict[str, Any] | None = None   # the host's search result, appended on the first model call
    applied: str | None = None              # the profile block last put in the system message


class CrewAIMemory:
    """Long-term memory for CrewAI crews."""

    framework = FRAMEWORK

    def __init__(self, service: "MemoryService", *, trigger_mode: TriggerMode | str | None = None,
                 user_message_key: str = "user_message", listeners: tuple[Listener, ...] | list[Listener] = (),
                 ambient: bool | None = None) -> None:
        self.runtime = MemoryRuntime(service, framework=FRAMEWORK, trigger_mode=trigger_mode, listeners=listeners,
                                     ambient=ambient)
        self.user_message_key = user_message_key
        self._kickoffs: dict[int, _Kickoff] = {}  # id() of CrewAI's kickoff context -> the running kickoff
        self._lock = threading.RLock()
        register_hooks(self)

    @property
    def trigger_mode(self) -> TriggerMode:
        return self.runtime.trigger_mode

    def policy(self) -> str:
        """The memory-use policy text this adapter appends to an equipped agent's backstory."""
        return self.runtime.policy()

    # -- setup ----------------------------------------------------------------------------------

    def tools_for(self, agent_id: str) -> list[MemoryTool]:
        """The memory tools for this trigger mode, acting as memory agent ``agent_id``."""
        require_agent_id("CrewAIMemory.tools_for", agent_id)
        tools = []
        for schema in self.runtime.tool_schemas():
            tool = MemoryTool(name=schema["name"], description=schema["description"],
                              args_schema=args_model(schema["name"], schema["input_schema"]), cache_function=never_cache)
            tool._memory, tool._agent_id = self, agent_id
            tools.append(tool)
        return tools

    def equip(self, agent: Any, *, agent_id: str) -> Any:
        """Give ``agent`` the memory tools and the memory-use policy, acting as memory agent ``agent_id``."""
        tools = self.tools_for(agent_id)
        agent.tools = [*[t for t in (agent.tools or []) if t.name not in MEMORY_TOOL_NAMES], *tools]
        policy = self.policy()
        if policy not in (agent.backstory or ""):
            agent.backstory = f"{agent.backstory}\n\n{policy}" if agent.backstory else policy
        return agent

    def attach(self, crew: Any) -> Any:
        """Hook the crew's kickoff into the memory lifecycle (it must have one equipped agent).

        Attaching again is a no-op; copies of an attached crew are attached already."""
        owners = {getattr(callback, "_agent_memory", None) for callback in crew.before_kickoff_callbacks} - {None}
        if owners - {self}:
            raise InvalidInputError("this crew is attached to another CrewAIMemory already; one memory serves a crew",
                                    field="crew")
        self._memory_agent_id(crew)
        if self not in owners:
            crew.before_kickoff_callbacks = [*crew.before_kickoff_callbacks, self._before_kickoff(crew)]
            crew.after_kickoff_callbacks = [*crew.after_kickoff_callbacks, self._after_kickoff()]
        register_hooks(self)
        return crew

    def _equipped_id(self, agent: Any) -> str | None:
        """The memory agent id ``agent`` acts as through this adapter's tools (copies keep them)."""
        for tool in getattr(agent, "tools", None) or []:
            if isinstance(tool, MemoryTool) and getattr(tool, "_memory", None) is self:
                return tool._agent_id
        return None

    def _memory_agent_id(self, crew: Any) -> str:
        equipped = [agent_id for agent_id in map(self._equipped_id, crew.agents) if agent_id is not None]
        if len(equipped) != 1:
            raise IdentityError(
                f"a crew attached to memory needs exactly one agent equipped with CrewAIMemory.equip (found {len(equipped)}); "
                "its agent id is the memory principal", source="CrewAI crew",
            )
        return equipped[0]

    # -- kickoffs -------------------------------------------------------------------------------

    def _before_kickoff(self, attached: Any):
        # ``attached`` is the crew attach() was given. A copy runs this same callback: the crew
        # that is really starting is the one CrewAI's execution-start hook saw (see _register).
        def before_kickoff(inputs: dict[str, Any] | None) -> dict[str, Any] | None:
            return self._start(attached, inputs or {})

        before_kickoff._agent_memory = self  # type: ignore[attr-defined]  # marks the crew (and its copies) attached
        before_kickoff._attached_crew = attached  # type: ignore[attr-defined]
        return before_kickoff

    def _after_kickoff(self):
        def after_kickoff(output: Any) -> Any:
            self._finish(get_crew_context())
            return output

        after_kickoff._agent_memory = self  # type: ignore[attr-defined]
        return after_kickoff

    def _attached_to(self, crew: Any) -> Any:
        """The crew attach() was given, when ``crew`` is it or a copy of it; else None."""
        for callback in getattr(crew, "before_kickoff_callbacks", None) or []:
            if getattr(callback, "_agent_memory", None) is self:
                return callback._attached_crew
        return None

    def execution_start(self, context: Any) -> None:
        """CrewAI is starting a kickoff of ``context.crew``: note which crew object it is (the
        kickoff callbacks, shared with copies, cannot tell)."""
        crew, marker = getattr(context, "crew", None), get_crew_context()
        if marker is not None and crew is not None and self._attached_to(crew) is not None:
            self._register(marker, crew)

    def _register(self, marker: Any, crew: Any) -> _Kickoff:
        key = id(marker)
        with self._lock:
            kickoff = self._kickoffs.get(key)
            if kickoff is None or kickoff.marker() is not marker:
                kickoff = _Kickoff(weakref.ref(marker, lambda ref: self._drop(key, ref)), str(crew.id), crew)
                self._kickoffs[key] = kickoff
            return kickoff

    def _start(self, attached: Any, inputs: dict[str, Any]) -> dict[str, Any]:
        register_hooks(self)  # a host may have cleared CrewAI's hooks; agents snapshot them after this
        marker = get_crew_context()
        if marker is None or not getattr(marker, "id", None):
            raise IdentityError("CrewAI started a kickoff without its crew context; memory cannot tell which kickoff "
                                "is running", source="CrewAI crew")
        try:
            kickoff = self._current(started=False)
            if kickoff is None:
                if str(marker.id) != str(attached.id):
                    raise IdentityError(
                        "memory did not see this copy of an attached crew start (were CrewAI's hooks cleared?), so it "
                        "cannot tell which crew is running: kick it off again", source="CrewAI crew")
                kickoff = self._register(marker, attached)
            if kickoff.crew is not attached:
                restore_templates(kickoff.crew, attached)
            identity = require_identity(
                _SOURCE, agent_id=self._memory_agent_id(kickoff.crew), user_id=inputs.get("user_id"),
                session_id=inputs.get("session_id"), project_id=inputs.get("project_id"),
                keys={"user_id": "inputs['user_id']", "session_id": "inputs['session_id']"},
            )
            with self._lock:
                running = next((k for k in self._kickoffs.values() if k is not kickoff and k.crew_id == kickoff.crew_id
                                and k.identity is not None and k.marker() is not None), None)
                if running is not None:
                    raise IdentityError(
                        f"crew {kickoff.crew_id} is already running a kickoff (session {running.identity.session_id}); a "
                        "CrewAI crew runs one kickoff at a time, so memory cannot tell two apart: use crew.copy() or "
                        "kickoff_for_each for concurrent kickoffs", source="CrewAI crew", session_id=identity.session_id)
                kickoff.identity = identity
            session = self.runtime.open(identity)
            message = inputs.get(self.user_message_key)
            if isinstance(message, str):
                self.runtime.record_turn(session, "user", message)
                kickoff.pending = self.runtime.host_search(session, message)
        except BaseException:
            self._finish(marker)
            raise
        return inputs

    def _finish(self, marker: Any) -> None:
        if marker is not None:
            with self._lock:
                kickoff = self._kickoffs.get(id(marker))
                if kickoff is not None and kickoff.marker() is marker:
                    del self._kickoffs[id(marker)]

    def _drop(self, key: int, ref: Any) -> None:
        # CrewAI's context object of a kickoff is gone (a kickoff that failed before its end hook)
        with self._lock:
            if key in self._kickoffs and self._kickoffs[key].marker is ref:
                del self._kickoffs[key]

    def _current(self, *, started: bool = True) -> _Kickoff | None:
        """The attached kickoff this thread or task runs in (with ``started``, only once its
        identity is known), if any."""
        marker = get_crew_context()
        if marker is None:
            return None
        with self._lock:
            kickoff = self._kickoffs.get(id(marker))
        if kickoff is None or kickoff.marker() is not marker or (started and kickoff.identity is None):
            return None
        return kickoff

    def current_session(self) -> "Session | None":
        """The memory session of the attached kickoff running here (None outside one)."""
        kickoff = self._current()
        return self.runtime.open(kickoff.identity) if kickoff is not None else None

    def end_session(self, session_id: str) -> str | None:
        """End the conversation: fires ``session_ended`` and queues extraction; returns the run id.
        A later kickoff with the same session id continues it in a new session (docs/adapters.md)."""
        return self.runtime.end(session_id)

    def conversation_sessions(self, session_id: str) -> list[str]:
        """The ids of the memory sessions a conversation has had, first part first."""
        return self.runtime.conversation_sessions(session_id)

    def run_tool(self, tool: MemoryTool, arguments: dict[str, Any]) -> str:
        """Run a memory tool call in the kickoff it belongs to; a structured error outside one."""
        kickoff = self._current()
        if kickoff is None:
            return refusal("a memory tool was called outside a running kickoff of a crew attached with CrewAIMemory.attach")
        if tool._agent_id != kickoff.identity.agent_id:
            return refusal(f"this memory tool acts for agent {tool._agent_id}, not the kickoff's agent {kickoff.identity.agent_id}")
        session = self.runtime.open(kickoff.identity)
        return format_tool_result(self.runtime.call_tool(session, tool.name, drop_null_arguments(arguments)))

    # -- hook bodies (called by the module's global CrewAI hooks) -------------------------------

    def _running(self, context: Any, *, refuse: bool = False) -> "tuple[_Kickoff, Session] | None":
        """The kickoff and session of a hook call by this adapter's equipped agent (None for others).
        With ``refuse``, an equipped agent outside an attached kickoff stops the run."""
        agent_id = self._equipped_id(getattr(context, "agent", None))
        if agent_id is None:
            return None
        kickoff, crew = self._current(), getattr(context, "crew", None)
        if kickoff is None or crew is None or str(crew.id) != kickoff.crew_id or kickoff.identity.agent_id != agent_id:
            if refuse:
                raise KickoffRefusedError(
                    f"agent {agent_id} is equipped with memory but is running outside a kickoff of a crew attached with "
                    "CrewAIMemory.attach (a crew never attached, or an agent run on its own); "
                    "attach the crew and kick it off", source="CrewAI crew")
            return None
        return kickoff, self.runtime.open(kickoff.identity)

    def before_llm_call(self, context: Any) -> None:
        """Put the session's ambient profile at the end of the system message (every call, the same
        text), record the first call's prefix, and append the host's pending search result once."""
        running = self._running(context, refuse=True)
        if running is None:
            return
        kickoff, session = running
        self._apply_profile(kickoff, session, context)
        with self._lock:
            result, kickoff.pending = kickoff.pending, None
        if result is None:
            return
        call_id = f"{AUTO_CALL_PREFIX}{result['search_id']}"
        arguments = json.dumps({"query": result["explanation"]["query"]}, ensure_ascii=False)
        context.messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": SEARCH_TOOL, "arguments": arguments}}]})
        context.messages.append({"role": "tool", "tool_call_id": call_id, "name": SEARCH_TOOL, "content": format_tool_result(result)})

    def _apply_profile(self, kickoff: _Kickoff, session: "Session", context: Any) -> None:
        # The policy is already in the system prompt (the equipped agent's backstory); the profile
        # is per session, so it is added here, after the policy, to the system message CrewAI
        # rebuilt for this kickoff (a message that already ends with it is left alone).
        profile = self.runtime.profile_text(session)
        messages = context.messages
        index = next((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "system"), None)
        if profile:
            if index is None:
                messages.insert(0, {"role": "system", "content": profile})
                index = 0
            else:
                text = str(messages[index].get("content") or "")
                previous = kickoff.applied
                if previous and previous != profile and text.endswith(previous):
                    # a record was forgotten mid-kickoff: its erased block replaces the old one
                    text = text[: -len(previous)].rstrip("\n")
                if not text.endswith(profile):
                    messages[index] = {**messages[index], "content": f"{text}\n\n{profile}" if text else profile}
            kickoff.applied = profile
        system_text = str(messages[index].get("content") or "") if index is not None else ""
        self.runtime.note_model_call(session, system_text, lambda: tool_definitions(getattr(context.agent, "tools", None)))

    def after_llm_call(self, context: Any) -> None:
        """Record a text reply of the equipped agent as an assistant turn."""
        running = self._running(context)
        if running is not None and isinstance(context.response, str):
            self.runtime.record_turn(running[1], "assistant", context.response)

    def after_tool_call(self, context: Any) -> None:
        """Record the result of a non-memory tool of the equipped agent as a tool turn."""
        running = self._running(context)
        if running is not None and context.tool_name not in MEMORY_TOOL_NAMES and context.tool_result is not None:
            self.runtime.record_turn(running[1], "tool", f"{context.tool_name}: {context.tool_result}")

    def execution_end(self, context: Any) -> None:
        """CrewAI's end of a kickoff (also a failed one): forget the kickoff."""
        self._finish(get_crew_context())
