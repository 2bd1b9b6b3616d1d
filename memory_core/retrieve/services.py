"""What the search stages may use besides their declared inputs: the services of one retriever.

A stage receives exactly this (the :class:`~memory_core.retrieve.retriever.Retriever` provides
it), never the memory service: the store, the vector index and embedder, access resolution, the
rewriter and reranker, the cache of readable term counts, and the query vectors.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Protocol

import numpy as np

from ..clock import Clock
from ..embed.base import Embedder
from ..index.vector_index import VectorIndex
from ..policy.grants import ScopeAccess
from ..settings import RetrievalSettings
from ..store.db import Store
from .rewrite import QueryRewriter


class PassageScorer(Protocol):
    """A reranker: one relevance score per passage for the query."""

    def score(self, query: str, passages: list[str]) -> list[float]: ...


class SearchServices(Protocol):
    """The services a stage may call (see the module docstring)."""

    store: Store
    index: VectorIndex
    embedder: Embedder
    clock: Clock

    def access(self, agent_id: str, user_id: str) -> ScopeAccess: ...

    def rewriter(self, settings: RetrievalSettings) -> QueryRewriter: ...

    def reranker(self, settings: RetrievalSettings) -> PassageScorer: ...

    def readable_term_counts(self, key: tuple) -> dict[str, int]:
        """A cache of readable term counts for one readable set in one store state (generate/lexical_score.py)."""
        ...

    def query_vector(self, text: str, settings: RetrievalSettings) -> tuple[np.ndarray, bool]:
        """The query's vector and whether the bounded query-vector cache supplied it."""
        ...

    def cached_query_vector(self, text: str, settings: RetrievalSettings) -> np.ndarray | None:
        """The query's vector if the bounded cache holds it, else None (never embeds)."""
        ...

    def query_vector_in_background(self, text: str, settings: RetrievalSettings) -> Future:
        """Start embedding ``text`` on a worker thread; the future gives ``(vector, milliseconds)``."""
        ...
