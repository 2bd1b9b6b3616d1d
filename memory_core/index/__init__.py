"""Vector index: a backend contract, the exact backend, and the store-synchronised index."""

from .base import VectorBackend
from .exact import ExactBackend
from .vector_index import VectorIndex

__all__ = ["ExactBackend", "VectorBackend", "VectorIndex"]
