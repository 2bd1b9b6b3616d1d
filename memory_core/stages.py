"""Named, timed stages: the small runner the write path uses (and the search pipeline may share).

A stage is a name and a function from a context to a context (or None to keep the same one).
:func:`run_stages` runs a list in order, times each one into a :class:`StageTimer`, and stops
early when the context says so (``ctx.stopped`` truthy). Foundation layer: no imports from the
rest of ``memory_core``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

Ctx = TypeVar("Ctx")


class StageTimer:
    """Accumulates milliseconds per named stage, in first-seen order."""

    def __init__(self) -> None:
        self.stages: dict[str, float] = {}
        self.failed: str | None = None  # the stage an exception escaped from (set by run_stages)
        self._start = time.perf_counter()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the body of a ``with`` block as stage ``name`` (added to earlier time under that name)."""
        began = time.perf_counter()
        try:
            yield
        finally:
            self.stages[name] = round(self.stages.get(name, 0.0) + (time.perf_counter() - began) * 1000.0, 3)

    def total_ms(self) -> float:
        """Milliseconds since the timer was created."""
        return round((time.perf_counter() - self._start) * 1000.0, 3)


@dataclass(frozen=True)
class Stage:
    """One named unit of a pipeline."""

    name: str
    run: Callable[[Any], Any]
    doc: str = ""



def run_stages(stages: Sequence[Stage], ctx: Ctx, timer: StageTimer) -> Ctx:
    """Run ``stages`` in order on ``ctx``, timing each; stop after one that sets ``ctx.stopped``.

    An exception propagates unchanged; the failing stage's name is left in ``timer.failed`` (the
    caller owns the timer), so a caller can log where a request was refused.
    """
    for stage in stages:
        try:
            with timer.stage(stage.name):
                result = stage.run(ctx)
        except Exception:
            timer.failed = stage.name
            raise
        if result is not None:
            ctx = result
        if getattr(ctx, "stopped", False):
            break
    return ctx
