"""A CrewAI ``BaseLLM`` that plays a :class:`~memory_core.adapters.script.Script` (offline, deterministic).

It reports native function calling, so CrewAI sends it tool schemas and expects OpenAI-style tool
calls back, which is how CrewAI drives real function-calling models.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from crewai.llms.base_llm import BaseLLM
from pydantic import ConfigDict, PrivateAttr

from .script import Call, ModelRequest, Say, Script


class ScriptedLLM(BaseLLM):
    """Plays ``script``; every call is recorded in ``script.requests``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Script
    model: str = "scripted"
    _ids: Any = PrivateAttr(default_factory=lambda: itertools.count(1))

    def call(self, messages: Any, tools: list[dict[str, Any]] | None = None, callbacks: Any = None,
             available_functions: dict[str, Any] | None = None, from_task: Any = None, from_agent: Any = None,
             response_model: Any = None) -> Any:
        """Record the request and return the next scripted text or tool calls."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        definitions = []
        for tool in tools or []:
            function = tool.get("function", tool)
            definitions.append({"name": function["name"], "description": function.get("description", ""),
                                "parameters": function.get("parameters", {})})
        system = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
        reply = self.script.next(ModelRequest(system=system, messages=_neutral(messages), tools=definitions))
        if isinstance(reply, Say):
            return reply.text
        if isinstance(reply, Call):
            return [{"id": f"call_{next(self._ids)}", "type": "function",
                     "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}} for name, args in reply.calls]
        raise TypeError(f"a scripted reply must be Say or Call, got {type(reply).__name__}")

    async def acall(self, messages: Any, tools: list[dict[str, Any]] | None = None, callbacks: Any = None,
                    available_functions: dict[str, Any] | None = None, from_task: Any = None, from_agent: Any = None,
                    response_model: Any = None) -> Any:
        """The same reply, for CrewAI's native async kickoffs (``akickoff``); played in a worker
        thread so a reply that waits for another run does not hold up the event loop."""
        return await asyncio.to_thread(self.call, messages, tools, callbacks, available_functions, from_task, from_agent,
                                       response_model)

    def supports_function_calling(self) -> bool:
        return True

    def supports_stop_words(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 200_000


def _neutral(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for message in messages:
        if message.get("role") == "system":
            continue
        item: dict[str, Any] = {"role": message.get("role"), "content": message.get("content") or ""}
        if message.get("tool_calls"):
            item["tool_calls"] = [
                {"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"] or "{}"), "id": c["id"]}
                for c in message["tool_calls"]
            ]
        if message.get("role") == "tool":
            item["name"] = message.get("name")
            item["tool_call_id"] = message.get("tool_call_id")
        out.append(item)
    return out
