"""The seam between the service and the agent tools above it.

The service does not import :mod:`memory_core.tools` (tools sit above the service and call its
public methods). Instead the tools package installs itself here when it is imported, which
``memory_core/__init__.py`` does; a host can also pass its own surface to ``MemoryService``.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..errors import MemoryCoreError
from ..settings import Settings


class ToolSurface(Protocol):
    """The agent tools: their JSON schemas and one entry point that runs a call as a session."""

    def schemas(self, settings: Settings, write_targets: list[str] | None) -> list[dict]: ...

    def call(self, session: Any, name: Any, arguments: Any) -> dict:
        """Run tool ``name`` as ``session`` (a :class:`~memory_core.service.Session`)."""
        ...


_installed: dict[str, ToolSurface] = {}


def install_tool_surface(surface: ToolSurface) -> None:
    """Make ``surface`` the default tool surface of every service."""
    _installed["default"] = surface


def default_tool_surface() -> ToolSurface:
    """The installed tool surface (``memory_core.tools``)."""
    if "default" not in _installed:
        raise MemoryCoreError("no tool surface is installed; import memory_core.tools first")
    return _installed["default"]
