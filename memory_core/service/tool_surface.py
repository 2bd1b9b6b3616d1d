"""The seam between the service and the agent tools it offers.

The service is given its tool surface: :func:`memory_core.tools.build_tools` composes the five
memory tools, and a host can pass its own to ``MemoryService``. The tools never import the service;
each call hands them the session (and through it the service) as an argument.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..settings import Settings


class ToolSurface(Protocol):
    """The agent tools: their JSON schemas and one entry point that runs a call as a session."""

    def schemas(self, settings: Settings, write_targets: list[str] | None) -> list[dict]: ...

    def call(self, session: Any, name: Any, arguments: Any, *, origin: str | None = "model") -> dict:
        """Run tool ``name`` as ``session`` (a :class:`~memory_core.service.Session`); ``origin``
        says who made the call."""
        ...
