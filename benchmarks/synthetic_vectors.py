"""Synthetic embedding sets for index benchmarks at sizes too large to embed for real (200K, 1M).

How they are made: ``base`` real MiniLM vectors of distinct synthetic record texts
(``search_corpus.texts``) are the cluster centres; each synthetic record vector is a centre plus
Gaussian noise, re-normalised, with the noise scaled so a record's cosine to its centre averages
about ``target_cosine`` (0.80 by default, which is how close paraphrases of one fact land in
MiniLM). Queries are real MiniLM vectors of the benchmark's query texts, so they keep the
anisotropy of real queries. Everything is seeded and reproducible.
"""

from __future__ import annotations

import numpy as np


def noisy_copies(centres: np.ndarray, count: int, *, target_cosine: float = 0.8, seed: int = 7,
                 chunk: int = 100_000) -> np.ndarray:
    """``count`` unit vectors, each a random centre plus isotropic noise (cosine to it ~ target)."""
    rng = np.random.default_rng(seed)
    dim = centres.shape[1]
    # |c|=1, noise ~ N(0, s^2 I): cos ~ 1/sqrt(1 + s^2 dim) => s = sqrt((1/t^2 - 1)/dim)
    scale = float(np.sqrt((1.0 / target_cosine**2 - 1.0) / dim))
    out = np.empty((count, dim), dtype=np.float32)
    for start in range(0, count, chunk):
        n = min(chunk, count - start)
        picks = rng.integers(0, centres.shape[0], size=n)
        block = centres[picks] + rng.standard_normal((n, dim), dtype=np.float32) * scale
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start : start + n] = block
    return out
