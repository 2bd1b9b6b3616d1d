"""A LangChain chat model that plays a :class:`~memory_core.adapters.script.Script` (offline, deterministic).

A real ``GenericFakeChatModel`` subclass: it supports ``bind_tools`` (recording the tool
definitions it was bound with) and answers with scripted text or tool calls, so a Deep Agents
agent runs end to end without a network.
"""

from __future__ import annotations

import itertools
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

from .script import Call, ModelRequest, Say, Script

_ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}


class ScriptedChatModel(GenericFakeChatModel):
    """Plays ``script``; every call is recorded in ``script.requests``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Script
    messages: Any = Field(default_factory=lambda: iter(()))
    bound_tools: list[dict[str, Any]] = Field(default_factory=list)
    _ids: Any = PrivateAttr(default_factory=lambda: itertools.count(1))

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        """Record the tool definitions (as OpenAI function schemas) and return a bound model."""
        definitions = [convert_to_openai_tool(tool)["function"] for tool in tools]
        return self.bind(tools=definitions, **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        tools = [{"name": t["name"], "description": t.get("description", ""), "parameters": t.get("parameters", {})}
                 for t in kwargs.get("tools") or []]
        reply = self.script.next(ModelRequest(system=_system_text(messages), messages=_neutral(messages), tools=tools))
        if isinstance(reply, Say):
            message = AIMessage(content=reply.text)
        elif isinstance(reply, Call):
            message = AIMessage(content="", tool_calls=[
                {"name": name, "args": dict(args), "id": f"call_{next(self._ids)}", "type": "tool_call"} for name, args in reply.calls
            ])
        else:
            raise TypeError(f"a scripted reply must be Say or Call, got {type(reply).__name__}")
        return ChatResult(generations=[ChatGeneration(message=message)])

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-model"


def _system_text(messages: list[BaseMessage]) -> str:
    return "\n".join(m.text for m in messages if isinstance(m, SystemMessage))


def _neutral(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    out = []
    for message in messages:
        if isinstance(message, SystemMessage):
            continue
        item: dict[str, Any] = {"role": _ROLES.get(message.type, message.type), "content": message.text}
        if isinstance(message, AIMessage) and message.tool_calls:
            item["tool_calls"] = [{"name": c["name"], "args": c["args"], "id": c["id"]} for c in message.tool_calls]
        if isinstance(message, ToolMessage):
            item["name"] = message.name
            item["tool_call_id"] = message.tool_call_id
        out.append(item)
    return out
