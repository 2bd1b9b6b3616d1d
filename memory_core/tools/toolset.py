"""The composition of the agent tools: which tools there are and which hooks hear of refusals.

:func:`build_tools` is the one place the tool surface is put together; the service calls it when
no other surface is passed in (``MemoryService(..., tools=...)`` lets a host offer its own). Nothing
registers itself at import, so importing a module here has no effect on what a service offers.
"""

from __future__ import annotations

from .handlers import log_refused_write, memory_forget, memory_get, memory_revise, memory_write, write_limits
from .registry import Tool, ToolRegistry
from .schemas import MemoryForgetInput, MemoryGetInput, MemoryReviseInput, MemoryWriteInput
from .search_tool import MemorySearchInput, memory_search, search_limits

def build_tools() -> ToolRegistry:
    """The five memory tools, with the write tools' refusal hook (a refused write is logged)."""
    return ToolRegistry(
        [
            Tool.of("memory_write", MemoryWriteInput, memory_write, limits=write_limits),
            Tool.of("memory_get", MemoryGetInput, memory_get),
            Tool.of("memory_revise", MemoryReviseInput, memory_revise, limits=write_limits),
            Tool.of("memory_forget", MemoryForgetInput, memory_forget),
            Tool.of("memory_search", MemorySearchInput, memory_search, limits=search_limits),
        ],
        refusal_hooks=[log_refused_write],
    )
