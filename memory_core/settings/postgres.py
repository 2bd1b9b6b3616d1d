"""The postgres section: the PostgreSQL store backend (dense search, pooling, erasure)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .base import _Section


class PostgresSettings(_Section):
    ann_min_records: int = Field(
        100_000, ge=1,
        description="PostgreSQL backend: from this many live vectors an IVF index (pgvector ivfflat, inner product, "
        "lists = square root of the vectors) is built in the background and dense search uses it; below it every "
        "search is an exact scan of the rows the hard filter admits. The index is rebuilt when the store has grown "
        "to four times the size it was built for.",
    )
    ann_index: Literal["ivfflat", "hnsw"] = Field(
        "ivfflat",
        description="PostgreSQL backend: the approximate index built from ann_min_records vectors: pgvector's ivfflat "
        "(the default: 0.98 of the exact top 10 at 1M records, ties counted) or hnsw (m 16, ef_construction 64; "
        "faster per probe but 0.66 on the same store, whose near-duplicate vectors suit graphs badly: "
        "benchmarks/README.md). Changing it replaces the index in the background.",
    )
    hnsw_ef_search: int = Field(
        100, ge=1, le=1000,
        description="PostgreSQL backend with ann_index hnsw: pgvector's hnsw.ef_search (candidates kept while walking "
        "the graph; higher is slower and closer to exact). Scans continue past it under a selective filter "
        "(hnsw.iterative_scan relaxed_order).",
    )
    ivf_probes: int = Field(
        32, ge=1, le=10_000,
        description="PostgreSQL backend: pgvector's ivfflat.probes (IVF lists scanned per search; higher is slower and "
        "closer to exact; 32 of 1,000 lists found 0.98 of the exact top 10 at 1M records, ties counted: benchmarks/README.md).",
    )
    exact_max_rows: int = Field(
        10_000, ge=0,
        description="PostgreSQL backend: a search whose hard filter admits at most this many rows scans them exactly "
        "even when the approximate index exists (a small scope costs little to scan, and an index probe under a "
        "selective filter would have to visit many rows it then discards).",
    )
    dense_search: Literal["matrix", "sql"] = Field(
        "matrix",
        description="PostgreSQL backend: where dense search scores the vectors. matrix (the default): in numpy, over "
        "an in-process matrix of the store's vectors loaded at the first search and kept current from the change "
        "feed before each one (dim x 4 bytes per record in every searching process: 150 MB at 100K x 384); the best "
        "rows are then confirmed by the hard filter's SQL, which alone decides admission, and the result is exact "
        "(about 5x faster than sql at 50K records: docs/scaling.md). sql: every search is one pgvector query, an "
        "exact scan of the admitted rows or the approximate index above ann_min_records. Searches inside a write "
        "transaction always use sql.",
    )
    matrix_max_records: int = Field(
        200_000, ge=0,
        description="PostgreSQL backend with dense_search matrix: above this many live vectors no matrix is kept "
        "(or the one held is dropped) and dense search runs in SQL as with dense_search sql (an exact scan, or the "
        "approximate index from ann_min_records); checked again a minute later.",
    )
    erase_delay_s: float = Field(
        2.0, ge=0,
        description="PostgreSQL backend: seconds a forget waits before starting the erasure pass (VACUUM FULL of the "
        "tables a forget writes, then WAL rotation), so forgets arriving together share one pass.",
    )
    pool_min_size: int = Field(
        1, ge=0, le=1000,
        description="PostgreSQL backend, processes serving many sessions at once (the MCP HTTP server; "
        "MemoryService.open(..., pooled=True)): connections the pool keeps open while idle. Other processes use "
        "one connection, shared by their threads.",
    )
    pool_max_size: int = Field(
        8, ge=1, le=1000,
        description="PostgreSQL backend, pooled processes (see pool_min_size): at most this many connections, so at "
        "most this many sessions' statements run at once; a call that finds every connection in use waits up to 30 s "
        "for one. Each connection is a server backend: count them against the server's max_connections. At least "
        "pool_min_size.",
    )

    @model_validator(mode="after")
    def _pool_sizes(self) -> "PostgresSettings":
        if self.pool_max_size < self.pool_min_size:
            raise ValueError(f"postgres.pool_max_size ({self.pool_max_size}) is below postgres.pool_min_size "
                             f"({self.pool_min_size})")
        return self
