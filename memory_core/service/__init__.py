"""The service layer: :class:`MemoryService` (the facade that wires the components of one store)
and :class:`Session` (one conversation). See docs/architecture.md."""

from .embedders import shared_embedder
from .facade import MemoryService
from .session import MAX_TURN_CHARS, TURN_ROLES, Session
from .tool_surface import ToolSurface

__all__ = ["MAX_TURN_CHARS", "MemoryService", "Session", "TURN_ROLES", "ToolSurface", "shared_embedder"]
