"""Small real test doubles shared by the unit tests."""

from __future__ import annotations

import hashlib
import re

import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """A deterministic bag-of-words embedder: texts sharing words get similar vectors.

    Unit tests use it to stay fast; integration and e2e tests use the real packaged model.
    """

    model_name = "test/hashing-embedder"
    model_version = "1"

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in _WORD.findall(text.casefold()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                out[i, int.from_bytes(digest[:4], "little") % self.dim] += 1.0
                out[i, int.from_bytes(digest[4:], "little") % self.dim] += 0.5
            norm = np.linalg.norm(out[i])
            if norm:
                out[i] /= norm
            else:
                out[i, 0] = 1.0
        return out
