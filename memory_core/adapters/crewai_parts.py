"""The CrewAI adapter's parts that deal with CrewAI itself: memory tools, copied crews, global hooks.

What ``crew.copy()`` (and so ``kickoff_for_each`` and ``kickoff_for_each_async``) copies, read from
CrewAI's source: the kickoff callbacks are kept as they are (the same function objects); each
agent is cloned with a new id but the *same* tool objects; each task is rebuilt from a dump of its
fields. The dump takes a task's or agent's text as it is now, so a crew that has run a kickoff
passes that kickoff's filled-in text (its user's message in the task description) to every later
copy, while its templates stay behind in private attributes. :func:`restore_templates` gives a
copy the attached crew's templates back before its inputs are filled in. Nothing in a tool is
bound to a kickoff, and CrewAI's opt-in tool cache (``Crew(cache=True)``) is refused for memory
tools: a cached result would answer another user's identical call, or report a write as done
without writing it. CrewAI's hooks are process-wide: :func:`register_hooks` keeps one set that
forwards to every live adapter.
"""

from __future__ import annotations

import copy
import threading
import weakref
from typing import Any

from ..errors import FrameworkUnavailableError, IdentityError
from .base import format_tool_result

try:
    from crewai.hooks import (
        InterceptionPoint, get_after_llm_call_hooks, get_after_tool_call_hooks, get_before_llm_call_hooks, get_hooks,
        register_after_llm_call_hook, register_after_tool_call_hook, register_before_llm_call_hook, register_hook,
    )
    from crewai.tools import BaseTool
    from pydantic import BaseModel, ConfigDict, PrivateAttr
except ImportError as exc:  # pragma: no cover - exercised only where the extra is missing
    raise FrameworkUnavailableError(
        "the CrewAI adapter needs the crewai extra: pip install 'agent-memory[crewai]'", missing=str(exc)
    ) from exc

_TEMPLATED = (("tasks", ("description", "expected_output", "output_file")), ("agents", ("role", "goal", "backstory")))


def never_cache(_arguments: Any = None, _result: Any = None) -> bool:
    """CrewAI's tool-cache rule for memory tools: never (a module-level function, so a crew that
    CrewAI serialises for a checkpoint keeps it)."""
    return False


def args_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
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
    """One memory tool of an equipped agent. It knows its adapter and memory agent id, never a
    kickoff: CrewAI shares tool objects between a crew and its copies."""

    _memory: Any = PrivateAttr(default=None)
    _agent_id: Any = PrivateAttr(default=None)

    def _run(self, **arguments: Any) -> str:
        if self._memory is None:
            return refusal("this memory tool belongs to no CrewAIMemory (a crew restored from a checkpoint?): "
                           "equip the agent and attach the crew again")
        return self._memory.run_tool(self, arguments)


def refusal(message: str) -> str:
    """A memory tool's answer when it cannot tell whose kickoff it runs in (nothing was done)."""
    return format_tool_result({"ok": False, "error": IdentityError(message, source="CrewAI crew").to_dict()})


def restore_templates(crew: Any, attached: Any) -> None:
    """Give ``crew``, a copy of ``attached``, the attached crew's task and agent templates where
    the copy never filled in inputs itself (so it starts from templates, not another kickoff's
    text). IdentityError when the copy's tasks or agents no longer line up with the attached crew's
    and the attached crew has run, since its text may then carry another kickoff's inputs."""
    for collection, fields in _TEMPLATED:
        copies, originals = list(getattr(crew, collection)), list(getattr(attached, collection))
        if len(copies) != len(originals):
            if any(getattr(o, f"_original_{f}", None) is not None for o in originals for f in fields):
                raise IdentityError(
                    f"this copy of an attached crew has {len(copies)} {collection} where the attached crew has "
                    f"{len(originals)}; CrewAI copies the text of the last kickoff into a copy, so memory cannot tell "
                    "whose inputs it holds: copy the crew without changing its tasks and agents", source="CrewAI crew")
            continue
        for item, original in zip(copies, originals):
            for field in fields:
                template = getattr(original, f"_original_{field}", None) or getattr(original, field, None)
                if template is not None and getattr(item, f"_original_{field}", None) is None and getattr(item, field) is not None:
                    setattr(item, f"_original_{field}", template)
                    setattr(item, field, template)


def tool_definitions(tools: Any) -> list[dict[str, Any]]:
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


# CrewAI's model, tool and execution hooks are process-wide; one set forwards to every live
# adapter (each ignores kickoffs it did not register). A host may clear CrewAI's hooks
# (``clear_all_global_hooks``), so they are checked, and put back, on every attach and kickoff.
_ADAPTERS: "weakref.WeakSet[Any]" = weakref.WeakSet()
_hooks_lock = threading.Lock()


def _before_llm(context: Any) -> None:
    for each in list(_ADAPTERS):
        each.before_llm_call(context)


def _after_llm(context: Any) -> None:
    for each in list(_ADAPTERS):
        each.after_llm_call(context)


def _after_tool(context: Any) -> None:
    for each in list(_ADAPTERS):
        each.after_tool_call(context)


def _execution_start(context: Any) -> None:
    for each in list(_ADAPTERS):
        each.execution_start(context)


def _execution_end(context: Any) -> None:
    for each in list(_ADAPTERS):
        each.execution_end(context)


def register_hooks(adapter: Any) -> None:
    """Forward CrewAI's hooks to ``adapter`` (a CrewAIMemory), putting back any a host cleared."""
    with _hooks_lock:
        _ADAPTERS.add(adapter)
        if _before_llm not in get_before_llm_call_hooks():
            register_before_llm_call_hook(_before_llm)
        if _after_llm not in get_after_llm_call_hooks():
            register_after_llm_call_hook(_after_llm)
        if _after_tool not in get_after_tool_call_hooks():
            register_after_tool_call_hook(_after_tool)
        if _execution_start not in get_hooks(InterceptionPoint.EXECUTION_START):
            register_hook(InterceptionPoint.EXECUTION_START, _execution_start)
        if _execution_end not in get_hooks(InterceptionPoint.EXECUTION_END):
            register_hook(InterceptionPoint.EXECUTION_END, _execution_end)
