"""Scripted model replies, shared by the offline examples and the adapter tests.

A script is a list of replies a model gives in order: :class:`Say` (a text answer, which ends the
turn) or :class:`Call` (one or more tool calls). A reply may also be a function of the request,
for replies that depend on earlier tool results (e.g. forgetting the record id a write returned).
Each framework has a real model class that plays a script in its own format
(``scripted_langchain.ScriptedChatModel``, ``scripted_crewai.ScriptedLLM``); both record every
request they receive as a :class:`ModelRequest`, in one neutral shape, so tests can compare what
the two frameworks showed the model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union


@dataclass(frozen=True)
class Say:
    """A text reply."""

    text: str


@dataclass(frozen=True)
class Call:
    """A reply made of tool calls: ``Call(("memory_search", {"query": "..."}), ...)``."""

    calls: tuple[tuple[str, dict[str, Any]], ...]

    def __init__(self, *calls: tuple[str, dict[str, Any]]) -> None:
        object.__setattr__(self, "calls", tuple(calls))


@dataclass
class ModelRequest:
    """What a model was shown for one call, in a framework-neutral shape."""

    system: str
    messages: list[dict[str, Any]]          # {"role", "content", "tool_calls"?, "name"?}
    tools: list[dict[str, Any]] = field(default_factory=list)  # {"name", "description", "parameters"}

    @property
    def tool_names(self) -> list[str]:
        return sorted(t["name"] for t in self.tools)

    def tool_results(self, name: str | None = None) -> list[dict[str, Any]]:
        """Tool-result messages (optionally of one tool), parsed from JSON where possible."""
        out = []
        for message in self.messages:
            if message["role"] == "tool" and (name is None or message.get("name") == name):
                out.append(parse_tool_text(message["content"]))
        return out


Reply = Union[Say, Call, Callable[[ModelRequest], Union[Say, Call]]]


def parse_tool_text(text: Any) -> Any:
    """A tool message's content as JSON when it is (error summaries precede the JSON on line two)."""
    if not isinstance(text, str):
        return text
    for candidate in (text, text.rsplit("\n", 1)[-1]):
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
    return text


class Script:
    """A thread-safe queue of replies plus the log of requests."""

    def __init__(self, replies: list[Reply] | None = None) -> None:
        self._replies = list(replies or [])
        self.requests: list[ModelRequest] = []
        self._lock = threading.Lock()

    def extend(self, replies: list[Reply]) -> None:
        """Queue more replies (e.g. the next user turn's)."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def remaining(self) -> int:
        return len(self._replies)

    def next(self, request: ModelRequest) -> Say | Call:
        """Record ``request`` and give the next reply (RuntimeError when the script is exhausted)."""
        with self._lock:
            self.requests.append(request)
            if not self._replies:
                raise RuntimeError(f"the scripted model has no reply left for request {len(self.requests)}")
            reply = self._replies.pop(0)
        return reply(request) if callable(reply) else reply
