"""The five agent tools. Importing this package registers the record tools; the search tool
registers itself from memory_core.retrieve."""

from . import handlers  # noqa: F401  (registers memory_write, memory_get, memory_revise, memory_forget)
from .registry import TOOLS, Tool, call_tool

__all__ = ["TOOLS", "Tool", "call_tool"]
