"""A deterministic bag-of-words embedder that needs no model weights and no torch.

For environments that cannot hold the real embedder, such as the CrewAI venv, where the offline
adapter example runs. Texts that share words get similar vectors; it knows nothing of meaning, so
a store embedded with it is for demonstrations and tests only (the stored model name keeps it from
being mixed with a real embedder's store).
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..text import WORD_CHARACTERS as _WORD


class HashingEmbedder:
    """Each word adds weight to two hashed dimensions; rows are L2-normalised."""

    model_name = "hashing-bag-of-words"
    model_version = "1"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def embed(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 unit rows."""
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
