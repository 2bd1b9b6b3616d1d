"""The tool surface: name → (input model, handler). Handlers receive the session, the parsed input
and the call's origin, all as arguments.

:meth:`ToolRegistry.call` is the one entry point: it parses JSON or a dict, validates it against the
model, runs the handler, and turns every MemoryCoreError or validation failure into
``{"ok": false, "error": {"code", "message", "details"}}``. Nothing is written on error because
each handler's writes happen in one transaction after validation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from ..errors import InvalidInputError, MemoryCoreError, UnknownToolError
from ..inputs import check_texts
from ..settings import Settings

log = logging.getLogger(__name__)


class ToolSession(Protocol):
    """The session a call runs as (a :class:`memory_core.service.Session`). The registry and the
    schemas are the tools' leaf contract: they import nothing above the foundation, so an adapter
    can read them without the rest of the library."""

    id: str
    agent_id: str
    user_id: str


class Handler(Protocol):
    """A tool's handler: the session it runs as, the parsed input, and who made the call."""

    def __call__(self, session: ToolSession, args: Any, *, origin: str | None) -> dict: ...


Limits = Callable[[Settings], dict[str, dict[str, Any]]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_model: type[BaseModel]
    handler: Handler
    limits: Limits | None = None  # per-field JSON-schema bounds read from the settings

    @classmethod
    def of(cls, name: str, input_model: type[BaseModel], handler: Handler, *, limits: Limits | None = None) -> "Tool":
        """A tool whose description is its input model's docstring."""
        return cls(name, (input_model.__doc__ or "").strip(), input_model, handler, limits)

    def schema(self, write_targets: list[str] | None = None, settings: Settings | None = None) -> dict[str, Any]:
        """The tool definition in the shape model APIs expect (name, description, input_schema).

        With ``settings``, bounds the handler enforces from the settings replace the model's
        static ones, so a model is never told a value is allowed that the handler refuses.
        """
        schema = self.input_model.model_json_schema()
        schema.pop("title", None)
        schema.pop("description", None)
        properties = schema.get("properties", {})
        if write_targets is not None and "target" in properties:
            properties["target"]["enum"] = list(write_targets)
        if settings is not None and self.limits is not None:
            for field_name, bounds in self.limits(settings).items():
                _bound(properties[field_name], bounds)
        return {"name": self.name, "description": self.description, "input_schema": schema}


def _bound(prop: dict[str, Any], bounds: dict[str, Any]) -> None:
    # An optional field is an anyOf of the typed schema and null: bound the typed branch.
    for branch in prop.get("anyOf", [prop]):
        if branch.get("type") != "null":
            branch.update(bounds)


RefusalHook = Callable[[ToolSession, str, Any, MemoryCoreError], None]


def error_result(exc: MemoryCoreError) -> dict[str, Any]:
    return {"ok": False, "error": exc.to_dict()}


def _parse_arguments(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, (str, bytes)):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"arguments are not valid JSON: {exc.msg}") from exc
        except UnicodeDecodeError as exc:
            raise InvalidInputError("arguments are not valid UTF-8 text") from exc
        except RecursionError as exc:
            raise InvalidInputError("arguments are nested too deeply") from exc
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidInputError("arguments must be a JSON object")
    return arguments


def _validate(tool: Tool, arguments: dict[str, Any]) -> BaseModel:
    check_texts(arguments)  # lone surrogates cannot be stored; refuse them before any write
    try:
        return tool.input_model.model_validate(arguments)
    except RecursionError as exc:
        raise InvalidInputError("arguments are nested too deeply") from exc
    except ValidationError as exc:
        problems = [
            {"field": ".".join(str(p) for p in err["loc"]) or "(root)", "problem": err["msg"]}
            for err in exc.errors(include_url=False, include_input=False)
        ]
        raise InvalidInputError(
            "invalid arguments: " + "; ".join(f"{p['field']}: {p['problem']}" for p in problems[:5]), problems=problems
        ) from None


class ToolRegistry:
    """A set of tools and the hooks told of each refused call: the tool surface a service is given
    (:class:`memory_core.service.ToolSurface`). Built by a composition function
    (:func:`memory_core.tools.build_tools`); nothing registers itself at import.

    ``refusal_hooks`` are called with (session, tool name, arguments, error) when a call is refused;
    the write tools use one so every refused write attempt leaves a write-log row.
    """

    def __init__(self, tools: Iterable[Tool], refusal_hooks: Iterable[RefusalHook] = ()) -> None:
        self.tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self.tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self.tools[tool.name] = tool
        self.refusal_hooks: tuple[RefusalHook, ...] = tuple(refusal_hooks)

    def names(self) -> list[str]:
        """The tool names, in the order given."""
        return list(self.tools)

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def schemas(self, settings: Settings, write_targets: list[str] | None) -> list[dict]:
        """Every tool's definition, bounded by ``settings`` and offering ``write_targets``."""
        return [tool.schema(write_targets, settings) for tool in self.tools.values()]

    def call(self, session: ToolSession, name: Any, arguments: Any, *, origin: str | None = "model") -> dict[str, Any]:
        """Run one tool call as ``session`` and always return a JSON-able dict.

        ``origin`` says who made the call (``model``, ``host``, ``admin``, ``eval``); it is handed to
        the handler as an argument (a search logs it in ``search_log.origin``).
        """
        try:
            if not isinstance(name, str) or name not in self.tools:
                available = sorted(self.tools)
                raise UnknownToolError(f"unknown tool {name!r}; available: {', '.join(available)}", available=available)
            tool = self.tools[name]
            arguments = _parse_arguments(arguments)
            return tool.handler(session, _validate(tool, arguments), origin=origin)
        except MemoryCoreError as exc:
            self._report_refusal(session, name, arguments, exc)
            return error_result(exc)
        except Exception as exc:  # a bug must not crash the host's agent loop; it is logged loudly
            log.exception("tool %s failed", name)
            return {"ok": False, "error": {"code": "internal_error", "message": f"internal error: {type(exc).__name__}"}}

    def _report_refusal(self, session: ToolSession, name: Any, arguments: Any, exc: MemoryCoreError) -> None:
        for hook in self.refusal_hooks:
            try:
                hook(session, name, arguments, exc)
            except Exception:  # logging a refusal must never turn it into a crash
                log.exception("refusal hook failed for tool %s", name)
