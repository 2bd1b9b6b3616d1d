"""The Deep Agents adapter: memory as a LangChain agent middleware.

Usage (docs/adapters.md has the whole contract)::

    memory = DeepAgentsMemory(service, trigger_mode="hybrid")
    agent = create_deep_agent(model=..., tools=[...], middleware=[memory.middleware()])
    config = {"configurable": {"thread_id": "t-1", "agent_id": "assistant", "user_id": "alice"}}
    agent.invoke({"messages": [{"role": "user", "content": "..."}]}, config)
    memory.end_session(config)      # LangGraph has no "conversation over" signal: the host says so

Identity comes from the run's LangGraph config, ``config["configurable"]``: ``agent_id`` (or the
adapter's ``agent_id`` argument; if both are given they must agree), ``user_id``, ``session_id``
(or else the LangGraph ``thread_id``) and optionally ``project_id``. Nothing else is consulted.

The middleware registers the memory tools (LangChain ``StructuredTool``s whose argument schema is
the core's JSON schema, unchanged), appends the static memory-use policy to the system message,
mirrors user, assistant and host-tool messages into the transcript, and in auto/hybrid mode runs
the host's search once per new user message, appending a non-empty result as an AI tool call plus
its ``ToolMessage``. langchain, langgraph and deepagents are imported here only, so ``memory_core``
imports without them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NotRequired

from ..errors import FrameworkUnavailableError, IdentityError
from .base import AUTO_CALL_PREFIX, MEMORY_TOOL_NAMES, Listener, MemoryRuntime, format_tool_result
from .identity import Identity, require_identity
from .modes import SEARCH_TOOL, TriggerMode

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
    from langchain_core.tools import StructuredTool
    from langgraph.config import get_config
except ImportError as exc:  # pragma: no cover - exercised only where the extra is missing
    raise FrameworkUnavailableError(
        "the Deep Agents adapter needs the deepagents extra: pip install 'agent-memory[deepagents]'", missing=str(exc)
    ) from exc

if TYPE_CHECKING:
    from ..service import MemoryService, Session

FRAMEWORK = "deepagents"
_KEYS = {"agent_id": "configurable['agent_id']", "user_id": "configurable['user_id']",
         "session_id": "configurable['session_id'] or configurable['thread_id']"}


class MemoryAgentState(AgentState):
    """Agent state plus how many messages have been mirrored into the transcript (checkpointed
    with the thread, so a resumed process does not record a message twice)."""

    memory_mirrored: NotRequired[int]


class DeepAgentsMemory:
    """Long-term memory for a Deep Agents (LangGraph) agent."""

    framework = FRAMEWORK

    def __init__(self, service: "MemoryService", *, trigger_mode: TriggerMode | str | None = None,
                 agent_id: str | None = None, listeners: tuple[Listener, ...] | list[Listener] = (),
                 ambient: bool | None = None) -> None:
        self.runtime = MemoryRuntime(service, framework=FRAMEWORK, trigger_mode=trigger_mode, listeners=listeners,
                                     ambient=ambient)
        self.agent_id = agent_id
        self._tools = [self._make_tool(schema) for schema in self.runtime.tool_schemas()]

    @property
    def trigger_mode(self) -> TriggerMode:
        return self.runtime.trigger_mode

    def policy(self) -> str:
        """The memory-use policy text this adapter appends to the system message."""
        return self.runtime.policy()

    def tools(self) -> list[StructuredTool]:
        """The memory tools for this trigger mode as LangChain tools (the middleware registers them)."""
        return list(self._tools)

    def middleware(self) -> "MemoryMiddleware":
        """The middleware to pass to ``create_deep_agent(middleware=[...])`` (or LangChain's ``create_agent``)."""
        return MemoryMiddleware(self)

    # -- identity and sessions --------------------------------------------------------------------

    def identity(self, config: Mapping[str, Any] | None) -> Identity:
        """The principal and session named by a LangGraph run config; IdentityError when incomplete."""
        configurable = (config or {}).get("configurable") or {}
        agent_id = configurable.get("agent_id")
        if self.agent_id is not None and agent_id not in (None, self.agent_id):
            raise IdentityError(
                f"configurable['agent_id'] is {agent_id!r} but this adapter serves agent {self.agent_id!r}",
                source="LangGraph config['configurable']",
            )
        return require_identity(
            "LangGraph config['configurable']", agent_id=agent_id or self.agent_id, user_id=configurable.get("user_id"),
            session_id=configurable.get("session_id") or configurable.get("thread_id"),
            project_id=configurable.get("project_id"), keys=_KEYS,
        )

    def open_session(self, config: Mapping[str, Any] | None = None) -> "Session":
        """The memory session of the run ``config`` (the current run's config when omitted)."""
        return self.runtime.open(self.identity(config if config is not None else get_config()))

    def end_session(self, config: Mapping[str, Any] | str) -> str | None:
        """End the conversation (a run config or a session id): fires ``session_ended`` and queues
        extraction; returns the extraction run id. A later run on the same thread continues it in a
        new memory session (``<id>+2``, ...; docs/adapters.md)."""
        return self.runtime.end(self._conversation(config))

    def conversation_sessions(self, config: Mapping[str, Any] | str) -> list[str]:
        """The ids of the memory sessions a conversation (a run config or a session id) has had, first part first."""
        return self.runtime.conversation_sessions(self._conversation(config))

    def _conversation(self, config: Mapping[str, Any] | str) -> str:
        return config if isinstance(config, str) else self.identity(config).session_id

    # -- tools ----------------------------------------------------------------------------------

    def _make_tool(self, schema: dict[str, Any]) -> StructuredTool:
        name = schema["name"]

        def run(**arguments: Any) -> str:
            session = self.open_session()
            return format_tool_result(self.runtime.call_tool(session, name, arguments))

        # The core's JSON schema is the argument schema as is: LangChain passes the model's
        # arguments through unvalidated, and the core validates them and answers with a
        # structured error, exactly as for any other host.
        return StructuredTool(name=name, description=schema["description"], args_schema=schema["input_schema"], func=run)

    # -- transcript -------------------------------------------------------------------------------

    def mirror(self, session: "Session", messages: list[Any], start: int) -> None:
        """Record ``messages[start:]`` into the transcript (user, assistant text, host tool results)."""
        for message in messages[start:]:
            if isinstance(message, HumanMessage):
                self.runtime.record_turn(session, "user", message.text)
            elif isinstance(message, AIMessage):
                self.runtime.record_turn(session, "assistant", message.text)
            elif isinstance(message, ToolMessage) and message.name not in MEMORY_TOOL_NAMES:
                self.runtime.record_turn(session, "tool", f"{message.name}: {message.text}")


class MemoryMiddleware(AgentMiddleware):
    """Deep Agents / LangChain middleware wiring one :class:`DeepAgentsMemory` into an agent."""

    state_schema = MemoryAgentState

    def __init__(self, memory: DeepAgentsMemory) -> None:
        super().__init__()
        self.memory = memory
        self.tools = memory.tools()

    @property
    def name(self) -> str:
        return "AgentMemoryMiddleware"

    def before_agent(self, state: dict[str, Any], runtime: Any) -> dict[str, Any] | None:
        """A new run: open the session, record the new user message(s), run the host's search."""
        memory = self.memory
        session = memory.open_session()
        messages = list(state.get("messages", []))
        start = int(state.get("memory_mirrored", 0) or 0)
        memory.mirror(session, messages, start)
        # the host searches once per user turn: for the newest user message of this run only
        appended: list[Any] = []
        new_user = [m for m in messages[start:] if isinstance(m, HumanMessage)]
        if new_user:
            appended = self._host_search(session, new_user[-1])
        update: dict[str, Any] = {"memory_mirrored": len(messages) + len(appended)}
        if appended:
            update["messages"] = appended
        return update

    def _host_search(self, session: "Session", message: Any) -> list[Any]:
        result = self.memory.runtime.host_search(session, message.text)
        if result is None:
            return []
        call_id = f"{AUTO_CALL_PREFIX}{result['search_id']}"
        query = result["explanation"]["query"]
        return [
            AIMessage(content="", tool_calls=[{"name": SEARCH_TOOL, "args": {"query": query}, "id": call_id, "type": "tool_call"}]),
            ToolMessage(content=format_tool_result(result), tool_call_id=call_id, name=SEARCH_TOOL),
        ]

    def after_model(self, state: dict[str, Any], runtime: Any) -> dict[str, Any] | None:
        """Mirror what arrived since the last hook (tool results, then the model's reply)."""
        messages = list(state.get("messages", []))
        start = int(state.get("memory_mirrored", 0) or 0)
        if start >= len(messages):
            return None
        self.memory.mirror(self.memory.open_session(), messages, start)
        return {"memory_mirrored": len(messages)}

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        """Append the memory-use policy (and the session's ambient profile, when on) to the system
        message of every model call: the same text for the whole session."""
        return handler(self._with_prefix(request))

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        """The same, for agents run with ``ainvoke``/``astream``."""
        return await handler(self._with_prefix(request))

    def _with_prefix(self, request: Any) -> Any:
        session = self.memory.open_session()
        runtime = self.memory.runtime
        system = _with_policy(request.system_message, runtime.prefix(session))
        runtime.note_model_call(session, system.text, lambda: _tool_definitions(request.tools))
        return request.override(system_message=system)


def _tool_definitions(tools: Any) -> list[dict[str, Any]]:
    """The tools of a model call as name, description and JSON-schema parameters (for the record)."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    out = []
    for tool in tools or []:
        try:
            function = convert_to_openai_tool(tool)["function"]
        except Exception:  # noqa: BLE001 - a provider-specific tool: keep its name at least
            function = {"name": getattr(tool, "name", None) or (tool.get("name") if isinstance(tool, dict) else str(tool))}
        out.append({"name": function.get("name"), "description": function.get("description", ""),
                    "parameters": function.get("parameters", {})})
    return out


def _with_policy(system: Any, policy: str) -> Any:
    if system is None:
        return SystemMessage(content=policy)
    if isinstance(system.content, str):
        return SystemMessage(content=f"{system.content}\n\n{policy}" if system.content else policy)
    # content blocks (e.g. carrying cache_control markers): keep them, add the policy as a block
    return SystemMessage(content=[*system.content, {"type": "text", "text": policy}])
