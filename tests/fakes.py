"""Small real test doubles shared by the unit tests."""

from __future__ import annotations

from memory_core.embed.hashing import HashingEmbedder as _BagOfWords


class HashingEmbedder(_BagOfWords):
    """The library's bag-of-words embedder under a test-only model name and a small dimension.

    Unit tests use it to stay fast; integration and e2e tests use the real packaged model.
    """

    model_name = "test/hashing-embedder"

    def __init__(self, dim: int = 64) -> None:
        super().__init__(dim)
