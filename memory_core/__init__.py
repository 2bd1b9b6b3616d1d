"""agent-memory's core library: a SQLite-backed long-term memory for AI agents.

Importing it has no side effects: :class:`MemoryService` wires its parts (store, index, write path,
retriever, and the agent tools from :func:`memory_core.tools.build_tools`) when it is built.
"""

from .clock import FixedClock, SystemClock
from .errors import MemoryCoreError
from .service import MemoryService, Session
from .settings import Settings, load_settings

__all__ = ["FixedClock", "MemoryCoreError", "MemoryService", "Session", "Settings", "SystemClock", "load_settings"]
__version__ = "0.1.0"
