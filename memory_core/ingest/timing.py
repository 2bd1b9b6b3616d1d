"""Per-stage timing for write operations (the timer lives in :mod:`memory_core.stages`)."""

from __future__ import annotations

from ..stages import Stage, StageTimer, run_stages

__all__ = ["Stage", "StageTimer", "run_stages"]
