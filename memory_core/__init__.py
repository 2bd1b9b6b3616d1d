"""agent-memory's core library: a SQLite-backed long-term memory for AI agents.

This package module is the composition root: it imports the service and then the tools, which
install themselves as the service's tool surface (the service never imports the layer above it).
"""

from .clock import FixedClock, SystemClock
from .errors import MemoryCoreError
from .service import MemoryService, Session
from .settings import Settings, load_settings
from . import tools as _tools  # noqa: E402,F401  (installs the agent tools; see docs/architecture.md)

__all__ = ["FixedClock", "MemoryCoreError", "MemoryService", "Session", "Settings", "SystemClock", "load_settings"]
__version__ = "0.1.0"
