"""Re-embedding a store with another embedder: the explicit migration ``agent-memory reembed`` runs."""

from __future__ import annotations

from collections.abc import Callable

from ..clock import Clock, format_ts
from ..embed.base import Embedder
from ..store import vector_queries
from ..store.db import Store
from ..store.records import vector_literal, vector_to_blob
from .vector_index import VectorIndex


def reembed_store(store: Store, index: VectorIndex, embedder: Embedder, clock: Clock, *, actor: str, batch_size: int = 256,
                  progress: Callable[[int, int], None] | None = None) -> int:
    """Re-embed every non-deleted record in batches, record the new model in the store's metadata
    (with a ``store.reembedded`` event) and rebuild the index; returns the number of records."""
    rows = vector_queries.live_contents(store)
    done = 0
    for start in range(0, len(rows), batch_size):
        chunk = rows[start : start + batch_size]
        vectors = embedder.embed([r["content"] for r in chunk])
        with store.transaction() as conn:
            for row, vector in zip(chunk, vectors):
                # on PostgreSQL also the pgvector copy dense search reads
                pg_vector = vector_literal(vector) if store.backend == "postgresql" else None
                vector_queries.set_embedding(store, conn, row["seq"], vector_to_blob(vector), embedder.model_name,
                                             embedder.model_version, int(vector.shape[0]), pg_vector)
        done += len(chunk)
        if progress:
            progress(done, len(rows))
    now = format_ts(clock.now())
    with store.transaction() as conn:
        for key, value in (("embed_model", embedder.model_name), ("embed_version", embedder.model_version), ("embed_dim", str(embedder.dim))):
            store.set_meta(key, value)  # joins this transaction
        store.bump(conn, 0, "reset")
        store.append_event(conn, at=now, kind="store.reembedded", actor=actor,
                           payload={"records": done, "model": embedder.model_name, "version": embedder.model_version})
    index.rebuild()
    return done
