"""Framework adapters: Deep Agents and CrewAI over the same session, tool and event contract.

The framework-neutral parts import without any framework installed; the adapters themselves are
imported from their modules (``memory_core.adapters.deepagents``, ``memory_core.adapters.crewai``),
which need the ``agent-memory[deepagents]`` or ``agent-memory[crewai]`` extra. docs/adapters.md
describes identity, events and trigger modes.
"""

from .base import AdapterEvent, MemoryRuntime, format_tool_result
from .identity import Identity, require_identity
from .modes import TRIGGER_MODES, TriggerMode
from .policy import memory_policy

__all__ = ["AdapterEvent", "Identity", "MemoryRuntime", "TRIGGER_MODES", "TriggerMode", "format_tool_result",
           "memory_policy", "require_identity"]
