"""Trigger modes: who calls memory_search (design section 7).

- ``tool_only`` (default): the model, through its memory_search tool.
- ``auto``: the host, once per user turn, appending a non-empty result as a tool-result message;
  memory_search is not offered to the model (the other four tools are).
- ``hybrid``: both.

All three run the identical retrieval pipeline through ``Session.call_tool("memory_search")``.
"""

from __future__ import annotations

from typing import Literal, get_args

from ..errors import InvalidInputError

TriggerMode = Literal["tool_only", "auto", "hybrid"]
TRIGGER_MODES: tuple[str, ...] = get_args(TriggerMode)
SEARCH_TOOL = "memory_search"


def check_trigger_mode(mode: object) -> TriggerMode:
    """``mode`` if it is a trigger mode, else InvalidInputError naming the three."""
    if mode not in TRIGGER_MODES:
        raise InvalidInputError(f"trigger mode must be one of {', '.join(TRIGGER_MODES)}; got {mode!r}", field="trigger_mode")
    return mode  # type: ignore[return-value]


def model_searches(mode: TriggerMode) -> bool:
    """Whether the model is offered memory_search in this mode."""
    return mode in ("tool_only", "hybrid")


def host_searches(mode: TriggerMode) -> bool:
    """Whether the host searches once per user turn in this mode."""
    return mode in ("auto", "hybrid")
