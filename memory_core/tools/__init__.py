"""The five agent tools. Importing this package registers the record tools; the search tool
registers itself from memory_core.retrieve."""

from . import handlers  # noqa: F401  (registers memory_write, memory_get, memory_revise, memory_forget)
from .registry import TOOLS, Tool, call_tool
from ..retrieve import tool as _search_tool  # noqa: F401,E402  (registers memory_search)

__all__ = ["TOOLS", "Tool", "call_tool"]
