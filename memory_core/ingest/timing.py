"""Per-stage timing for write and search operations."""

from __future__ import annotations

import time
from contextlib import contextmanager
from collections.abc import Iterator


class StageTimer:
    """Accumulates milliseconds per named stage, in first-seen order."""

    def __init__(self) -> None:
        self.stages: dict[str, float] = {}
        self._start = time.perf_counter()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            self.stages[name] = round(self.stages.get(name, 0.0) + (time.perf_counter() - began) * 1000.0, 3)

    def total_ms(self) -> float:
        return round((time.perf_counter() - self._start) * 1000.0, 3)
