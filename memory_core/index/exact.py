"""Exact cosine search over an in-memory float32 matrix of unit vectors."""

from __future__ import annotations

import numpy as np


def fit_mask(allowed: np.ndarray, size: int) -> np.ndarray:
    """``allowed`` cut or padded (with False) to ``size`` rows: rows added after the mask was
    computed are not allowed, never an error."""
    if allowed.shape[0] >= size:
        return allowed[:size]
    out = np.zeros(size, dtype=bool)
    out[: allowed.shape[0]] = allowed
    return out


class ExactBackend:
    """Brute-force inner product over a growable matrix; rows of deleted records are dead."""

    def __init__(self, dim: int, capacity: int = 1024) -> None:
        self.dim = dim
        self._matrix = np.zeros((capacity, dim), dtype=np.float32)
        self._seqs = np.full(capacity, -1, dtype=np.int64)
        self._alive = np.zeros(capacity, dtype=bool)
        self._rows: dict[int, int] = {}
        self._size = 0

    def _grow(self) -> None:
        capacity = max(1024, self._matrix.shape[0] * 2)
        matrix = np.zeros((capacity, self.dim), dtype=np.float32)
        matrix[: self._size] = self._matrix[: self._size]
        seqs = np.full(capacity, -1, dtype=np.int64)
        seqs[: self._size] = self._seqs[: self._size]
        alive = np.zeros(capacity, dtype=bool)
        alive[: self._size] = self._alive[: self._size]
        self._matrix, self._seqs, self._alive = matrix, seqs, alive

    def adopt(self, matrix: np.ndarray, seqs: np.ndarray) -> None:
        """Take ``matrix`` (capacity x dim, writable; a mapped vector file, say) as the backend's
        matrix, its first ``len(seqs)`` rows live and holding those records: a bulk load without a
        copy. Later upserts append after them, and grow (copy) only past the capacity."""
        n = int(seqs.size)
        if matrix.ndim != 2 or matrix.shape[1] != self.dim or matrix.shape[0] < n or matrix.dtype != np.float32:
            raise ValueError(f"a bulk load needs a float32 matrix of at least {n} x {self.dim}, got {matrix.shape} {matrix.dtype}")
        rows = dict(zip(seqs.tolist(), range(n)))
        if len(rows) != n:
            raise ValueError("a bulk load names a record twice")
        capacity = matrix.shape[0]
        self._matrix = matrix
        self._seqs = np.full(capacity, -1, dtype=np.int64)
        self._seqs[:n] = seqs
        self._alive = np.zeros(capacity, dtype=bool)
        self._alive[:n] = True
        self._rows, self._size = rows, n

    def upsert(self, seq: int, vector: np.ndarray) -> int:
        row = self._rows.get(seq)
        if row is None:
            if self._size == self._matrix.shape[0]:
                self._grow()
            row = self._size
            self._size += 1
            self._rows[seq] = row
            self._seqs[row] = seq
        self._matrix[row] = vector
        self._alive[row] = True
        return row

    def delete(self, seq: int) -> None:
        row = self._rows.get(seq)
        if row is not None:
            self._alive[row] = False
            self._matrix[row] = 0.0

    def row_of(self, seq: int) -> int | None:
        return self._rows.get(seq)

    def seqs(self) -> np.ndarray:
        return self._seqs[: self._size]

    def alive(self) -> np.ndarray:
        return self._alive[: self._size]

    def search(self, query: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        if self._size == 0 or k <= 0:
            return []
        mask = self._alive[: self._size]
        if allowed is not None:
            mask = mask & fit_mask(allowed, self._size)
        rows = np.flatnonzero(mask)
        if rows.size == 0:
            return []
        if rows.size * 4 >= self._size:
            # Most rows allowed: one product over the whole matrix, then pick the allowed scores, is
            # several times cheaper than gathering the allowed rows into a copy first.
            scores = (self._matrix[: self._size] @ query)[rows]
        else:
            scores = self._matrix[rows] @ query
        take = min(k, rows.size)
        top = np.argpartition(-scores, take - 1)[:take]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._seqs[r]), float(scores[t])) for r, t in zip(rows[top], top)]

    def similarity(self, query: np.ndarray, seqs: list[int]) -> dict[int, float]:
        out: dict[int, float] = {}
        for seq in seqs:
            row = self._rows.get(seq)
            if row is not None and self._alive[row]:
                out[seq] = float(self._matrix[row] @ query)
        return out

    def count(self) -> int:
        return int(np.count_nonzero(self._alive[: self._size]))
