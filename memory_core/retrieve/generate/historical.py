"""The historical re-run of the generators: what dense, lexical and entity search find when the
hard filter also admits superseded, expired and lapsed records.

The gate's lifecycle probe (:mod:`..gate.probe`) asks this on an empty answer, to say whether older
records alone would have answered. The gate never runs a generator itself: the retriever hands it
:func:`historical_candidates` (``GateStage(historical=...)`` in ``default_stages``), so the
stages that run generators stay in this package.

The re-run is cheap by construction: dense search covers only the rows the wider filter adds
(usually few, so a small gathered product rather than a second scan of the matrix), and lexical
search reuses the doclists the lexical stage already read, so the full-text index is not asked
again.
"""

from __future__ import annotations

import numpy as np

from ...settings import RetrievalSettings
from ...store.records import HISTORICAL_STATUSES
from ...text import query_terms
from ..filters import HardFilter, IndexMask, index_mask
from ..search_types import Candidate
from ..services import SearchServices
from .candidates import COSINE_DIGITS
from .dense import dense_candidates
from .entity import entity_candidates
from .lexical import lexical_candidates
from .lexical_score import LexicalResult, readable_lookup

def _added_rows(wide: IndexMask, narrow: IndexMask | None) -> IndexMask:
    """The rows ``wide`` admits that ``narrow`` (the search's own mask) does not."""
    if hasattr(wide, "without"):  # PostgreSQL: the same difference, as SQL
        return wide.without(narrow) if narrow is not None else wide
    added = wide.copy()
    if narrow is not None and narrow.shape == added.shape:
        added &= ~narrow
    return added


def historical_candidates(deps: SearchServices, *, settings: RetrievalSettings, query: str, filter: HardFilter,
                          mask: IndexMask | None, query_vector: np.ndarray | None, entities: list[dict],
                          doclists: dict) -> tuple[dict[int, Candidate], LexicalResult | None]:
    """What the generators find under ``filter`` widened to every historical status (lapsed
    provisional records included), merged by record (seq -> candidate, each with its query cosine
    when there is a query vector), and the lexical result (None when the query has no terms).

    ``mask`` is the search's own index mask: dense search looks only at the rows the wider filter
    adds to it. ``doclists`` are the lexical stage's, reused."""
    s = settings
    wide = filter.with_statuses(HISTORICAL_STATUSES, include_lapsed=True)
    found: dict[int, Candidate] = {}
    wide_mask = index_mask(deps.index, wide, [])
    if query_vector is not None:
        added = _added_rows(wide_mask, mask)
        for cand in dense_candidates(deps.store, deps.index, wide, added, query_vector, s.candidates_per_generator)[0]:
            found[cand.seq] = cand
    terms = query_terms(query, s.lexical_max_terms)
    lexical = None
    if terms:
        cands, lexical = lexical_candidates(deps.store, wide, readable_lookup(deps.index, wide_mask), terms, s.candidates_per_generator,
                                            s.lexical_max_df_share, s.lexical_max_postings, doclists=doclists)
        for cand in cands:
            kept = found.setdefault(cand.seq, cand)
            kept.lexical, kept.lexical_terms = cand.lexical, cand.lexical_terms
    for cand in entity_candidates(deps.store, wide, entities, s.candidates_per_generator):
        found.setdefault(cand.seq, cand).entities = cand.entities
    if query_vector is not None:
        sims = deps.index.similarity(query_vector, [seq for seq, c in found.items() if c.cosine is None])
        for seq, value in sims.items():
            found[seq].cosine = round(float(value), COSINE_DIGITS)
    return found, lexical
