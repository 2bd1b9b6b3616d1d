"""Near-duplicate collapse: the gate's best survivors read back, and a record within
``collapse_threshold`` cosine of a better-ranked one folded into it."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..settings import RetrievalSettings
from ..store.records import blob_to_vector
from ..store.search_queries import surviving_rows, surviving_rows_with_records
from .recorder import StageRecorder
from .request import SearchRequest
from .search_types import Candidate
from .services import SearchServices

K = TypeVar("K", bound=Hashable)


def collapse_near_duplicates(
    keys: Sequence[K], vectors: np.ndarray, threshold: float
) -> tuple[list[K], dict[K, tuple[K, float]]]:
    """Walk ``keys`` in rank order, keeping an item unless it is within ``threshold`` cosine of an
    item already kept. Returns the kept keys and, for each dropped key, (the key kept, cosine).

    ``vectors`` holds one unit vector per key, in the same order. A key without a vector (an all
    zero row) is always kept.
    """
    kept: list[K] = []
    kept_rows: list[int] = []
    absorbed: dict[K, tuple[K, float]] = {}
    vectors = np.asarray(vectors, dtype=np.float32)
    if len(keys) == 0:
        return kept, absorbed
    # One product for all pairs. einsum's own loop, not BLAS: for a few dozen rows a threaded BLAS
    # call costs more in thread wake-ups (badly so on a busy machine) than the arithmetic.
    gram = np.einsum("ij,kj->ik", vectors, vectors)
    close = gram >= threshold
    # Only a row close to some earlier row can be absorbed; the rest (almost all) are kept without
    # looking at the kept list.
    suspect = np.triu(close, 1).any(axis=0).tolist()
    for i, key in enumerate(keys):
        if suspect[i] and kept_rows and close[i, kept_rows].any():
            sims = gram[i, kept_rows]
            j = int(np.argmax(sims))
            absorbed[key] = (kept[j], float(sims[j]))
            continue
        kept.append(key)
        kept_rows.append(i)
    return kept, absorbed


def collapse_window(limit: int) -> int:
    """How many of the best gate survivors are loaded and examined: three times the limit (at
    least ten more than it), ample for collapse and budget skips to still fill the limit."""
    return max(3 * limit, limit + 10)


def stored_vectors(blobs: list, dim: int) -> np.ndarray:
    """Rows of unit vectors from stored embedding blobs (a zero row for a missing or mis-sized one, as
    the index's ``vectors`` gives)."""
    out = np.zeros((len(blobs), dim), dtype=np.float32)
    for i, blob in enumerate(blobs):
        if blob is not None:
            vector = blob_to_vector(blob)
            if vector.shape[0] == dim:
                out[i] = vector
    return out


class CollapseStage:
    """Fetch the surviving records and fold near-duplicates into the better-ranked copy."""

    name = "collapse"

    @dataclass(slots=True)
    class Inputs:
        settings: RetrievalSettings
        request: SearchRequest
        ranking: list[Candidate]

    @dataclass(slots=True)
    class Outputs:
        ranking: list[Candidate]  # the kept candidates, now with their content
        # PostgreSQL: the window's full records, read with the rows above in one round trip, for the
        # budget stage's results (None on SQLite, where the budget stage reads its few results itself)
        window_records: dict | None

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        threshold = given.settings.collapse_threshold
        window = collapse_window(given.request.limit)
        for cand in given.ranking[window:]:
            rec.drop(cand, f"outside the collapse window of {window}")
        ranking = given.ranking[:window]
        seqs = [c.seq for c in ranking]
        # PostgreSQL keeps no vectors in memory: read them with the content, in the same statement
        with_vectors = hasattr(deps.index, "search_with_rows")
        records = None
        if with_vectors:
            rows, records = surviving_rows_with_records(deps.store, seqs)
        else:
            rows = surviving_rows(deps.store, seqs, with_vectors)
        present: list[Candidate] = []
        for cand in ranking:
            row = rows.get(cand.seq)
            if row is None or row["status"] == "deleted":
                rec.drop(cand, "record was deleted while the search ran")
                continue
            cand.content = row["content"]
            present.append(cand)
        # The vectors come from the in-memory index (already refreshed for this search), not from
        # the store's blobs: reading and decoding 30 blobs was most of this stage's time.
        if with_vectors:
            vectors = stored_vectors([rows[c.seq]["embedding"] for c in present], deps.index.dim)
        else:
            vectors = deps.index.vectors([c.seq for c in present])
        kept_ids, absorbed = collapse_near_duplicates([c.record_id for c in present], vectors, threshold)
        by_id = {c.record_id: c for c in present}
        for cand in present:
            if cand.record_id in absorbed:
                keeper, cosine = absorbed[cand.record_id]
                by_id[keeper].duplicates.append({"id": cand.record_id, "cosine": round(cosine, 6)})
                rec.drop(cand, f"near-duplicate of {keeper} (cosine {cosine:.3f} >= {threshold})")
        ranking = [by_id[i] for i in kept_ids]
        rec.io(inputs={"candidates": len(seqs), "threshold": threshold, "window": window},
               outputs={"kept": [c.record_id for c in ranking], "collapsed": len(absorbed)})
        return self.Outputs(ranking, records)
