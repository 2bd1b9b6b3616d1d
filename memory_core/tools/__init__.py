"""The five agent tools: schemas, handlers, the registry that runs a call, and :func:`build_tools`,
which composes them (the service calls it; importing this package registers nothing).

Handlers call public methods of the session and service they are handed at call time.
"""

from .registry import Tool, ToolRegistry
from .toolset import build_tools

__all__ = ["Tool", "ToolRegistry", "build_tools"]
