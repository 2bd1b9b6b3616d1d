"""The dense generator: cosine top-k over the vector index under the hard filter's mask."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...settings import RetrievalSettings
from ...store.search_queries import CANDIDATE_COLUMNS, candidate_rows
from ..filters import HardFilter, IndexMask, allowed_count
from ..recorder import StageRecorder
from ..search_types import Candidate
from ..services import SearchServices
from .candidates import COSINE_DIGITS, candidate_from_row
from .embedding import PendingVector


def dense_candidates(store, index, flt: HardFilter, mask: IndexMask, query_vec: np.ndarray, k: int) -> tuple[list[Candidate], list[dict], dict]:
    """Top ``k`` records by cosine under the mask; also rows refused by the re-check (stale index)
    and how the index answered (exact scan or approximate index)."""
    by_seq = None
    if hasattr(index, "search_with_rows"):  # PostgreSQL: the rows come with the hits, in one statement
        hits, how, rows = index.search_with_rows(query_vec, k, mask, CANDIDATE_COLUMNS)
        by_seq = {row["seq"]: row for row in rows}
    else:
        hits, how = index.search_explained(query_vec, k, mask)
    hits = sorted(((seq, round(float(cosine), COSINE_DIGITS)) for seq, cosine in hits), key=lambda hit: (-hit[1], hit[0]))
    if not hits:
        return [], [], how
    if by_seq is None:
        by_seq = candidate_rows(store, [seq for seq, _ in hits])
    out: list[Candidate] = []
    refused: list[dict] = []
    for seq, cosine in hits:
        row = by_seq.get(seq)
        why = "record no longer exists" if row is None else flt.admits(row)
        if why:
            refused.append({"seq": seq, "reason": f"index row disagrees with the store: {why}"})
            continue
        cand = candidate_from_row(row)
        cand.dense_rank = len(out) + 1
        cand.cosine = float(cosine)
        out.append(cand)
    return out, refused, how


class DenseStage:
    """Waits for the query vector if it is still being made, then the top-k by cosine."""

    name = "dense"

    @dataclass(slots=True)
    class Inputs:
        settings: RetrievalSettings
        filter: HardFilter
        mask: IndexMask
        query_vector: np.ndarray | None
        pending_vector: PendingVector | None

    @dataclass(slots=True)
    class Outputs:
        query_vector: np.ndarray | None
        dense_hits: list[Candidate]

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        k = given.settings.candidates_per_generator
        allowed = allowed_count(given.mask) if given.mask is not None else 0
        # waited for also when nothing is allowed: later stages may compare with it
        vector = given.pending_vector.wait(rec.stage) if given.pending_vector is not None else given.query_vector
        rec.io(inputs={"k": k, "indexed_rows_allowed": allowed})
        if allowed == 0:
            rec.note("no indexed record passes the hard filter")
            rec.io(outputs={"candidates": []})
            return self.Outputs(vector, [])
        found, refused, how = dense_candidates(deps.store, deps.index, given.filter, given.mask, vector, k)
        for item in refused:
            rec.note(f"seq {item['seq']}: {item['reason']}")
        rec.io(outputs={"index": how, "candidates": [{"id": c.record_id, "rank": c.dense_rank, "cosine": round(c.cosine, 6)} for c in found]})
        return self.Outputs(vector, found)
