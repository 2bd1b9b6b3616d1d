"""The five agent tools: schemas, handlers and the one entry point that runs a call.

Importing this package registers the tools and installs them as the services' tool surface
(``memory_core/__init__.py`` imports it). Handlers call public methods of the session and service.
"""

from ..service import install_tool_surface
from . import handlers, search_tool  # noqa: F401  (register memory_write/get/revise/forget and memory_search)
from .registry import TOOLS, RegisteredTools, Tool, call_tool

install_tool_surface(RegisteredTools())

__all__ = ["TOOLS", "RegisteredTools", "Tool", "call_tool"]
