"""The query embedding: from the query-vector cache, in line, or on a worker thread while the
lexical and entity generators run (``retrieval.overlap_query_embedding``); dense waits for it."""

from __future__ import annotations

import time
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np

from ...embed import embedder_runtime
from ...settings import RetrievalSettings
from ..recorder import StageRecorder
from ..services import SearchServices


class PendingVector:
    """A query vector being made on a worker thread; the first stage that needs it waits here.

    The embedding's own time and how long the waiting stage waited go into the query_embedding
    stage's trace (its recorder is kept for that); a failure is that stage's too.
    """

    def __init__(self, future: Future, embedding: StageRecorder) -> None:
        self._future = future
        self._embedding = embedding

    def wait(self, waiter: str) -> np.ndarray:
        """The vector, once made (``waiter``: the stage that waits, for the trace)."""
        began = time.perf_counter()
        try:
            vector, embed_ms = self._future.result()
        except BaseException as exc:  # the failure belongs to the embedding: say so in its trace
            self._embedding.fail(f"the query embedding failed on its worker thread: {type(exc).__name__}: {exc}")
            raise
        waited = round((time.perf_counter() - began) * 1000.0, 3)
        self._embedding.io(outputs={"embedding_ms": round(embed_ms, 3), "waited_ms": waited, "waited_in": waiter})
        # (no times in the note: notes are compared across stores, times are in the outputs)
        self._embedding.note(f"embedded on a worker thread while the lexical and entity stages ran; "
                             f"{waiter} then waited for the vector (embedding_ms, waited_ms)")
        return vector


class QueryEmbeddingStage:
    """The query's vector: a cache hit at once, else made on a worker thread (or in line)."""

    name = "query_embedding"

    @dataclass(slots=True)
    class Inputs:
        query: str
        settings: RetrievalSettings

    @dataclass(slots=True)
    class Outputs:
        query_vector: np.ndarray | None  # None while it is being made (then pending_vector holds it)
        pending_vector: PendingVector | None

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        embedder, settings = deps.embedder, given.settings
        rec.io(inputs={"query": given.query}, outputs={
            "model": embedder.model_name, "version": embedder.model_version, "dim": int(embedder.dim),
            "runtime": embedder_runtime(embedder)})
        vector = deps.cached_query_vector(given.query, settings)
        if vector is not None:
            rec.io(outputs={"cache": "hit"})
            return self.Outputs(vector, None)
        if settings.overlap_query_embedding:
            # Lexical and entity search need no vector: they run while a worker thread embeds,
            # and the dense stage waits for the vector (PendingVector.wait).
            pending = PendingVector(deps.query_vector_in_background(given.query, settings), rec)
            rec.io(outputs={"cache": "miss", "mode": "overlapped with the lexical and entity stages"})
            return self.Outputs(None, pending)
        vector, cached = deps.query_vector(given.query, settings)
        rec.io(outputs={"cache": "hit" if cached else "miss", "mode": "in line"})
        return self.Outputs(vector, None)
