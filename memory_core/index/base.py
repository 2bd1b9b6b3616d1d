"""The vector backend contract.

A backend holds one vector per record row (keyed by ``records.seq``) and answers exact or
approximate nearest-neighbour queries restricted to a boolean ``allowed`` mask over its rows.
Callers only use this contract, so an approximate backend can replace the exact one for large
stores without touching them.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class VectorBackend(Protocol):
    dim: int

    def upsert(self, seq: int, vector: np.ndarray) -> int:
        """Store ``vector`` for ``seq``; returns its row number."""
        ...

    def delete(self, seq: int) -> None:
        """Mark the row of ``seq`` dead (it is never returned again)."""
        ...

    def row_of(self, seq: int) -> int | None:
        """Row number for ``seq``, or None."""
        ...

    def seqs(self) -> np.ndarray:
        """The seq stored in each row (-1 for unused rows); length == capacity in use."""
        ...

    def search(self, query: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top ``k`` (seq, cosine) pairs among live rows where ``allowed`` is True."""
        ...

    def similarity(self, query: np.ndarray, seqs: list[int]) -> dict[int, float]:
        """Cosine of ``query`` against specific rows (missing seqs are left out)."""
        ...

    def count(self) -> int:
        """Live rows."""
        ...
