"""The lexical generator: per query term the readable records holding it, ranked by a lexical
score computed from those readable postings alone (:mod:`.lexical_score`)."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import RetrievalSettings
from ...store.search_queries import candidate_rows
from ...text import query_terms
from ..filters import HardFilter, IndexMask, allowed_count
from ..recorder import StageRecorder
from ..search_types import Candidate
from ..services import SearchServices
from .candidates import candidate_from_row
from .lexical_score import LexicalResult, Readable, lexical_search, readable_counts, readable_lookup


def lexical_candidates(store, flt: HardFilter, lut: Readable, terms: list[str], k: int, max_share: float, max_postings: int,
                       known_counts: dict[str, int] | None = None, doclists: dict | None = None) -> tuple[list[Candidate], LexicalResult]:
    """Top ``k`` readable records by lexical score, as candidates.

    ``lut`` marks the seqs the hard filter admits (from the index mask); each candidate's row is
    checked against the filter again, as the dense generator does, in case the index is stale.
    """
    result = lexical_search(store, lut, terms, k, max_share, max_postings, known_counts, doclists)
    if not result.ranked:
        return [], result
    rows = candidate_rows(store, [seq for seq, _, _ in result.ranked])
    out = []
    for seq, score, held in result.ranked:
        row = rows.get(seq)
        if row is None or flt.admits(row):
            continue
        cand = candidate_from_row(row)
        cand.lexical_rank = len(out) + 1
        cand.lexical = score
        cand.lexical_terms = held
        out.append(cand)
    return out, result


class LexicalStage:
    """Lexical candidates with statistics over the readable records only."""

    name = "lexical"

    @dataclass(slots=True)
    class Inputs:
        query: str
        settings: RetrievalSettings
        filter: HardFilter
        mask: IndexMask

    @dataclass(slots=True)
    class Outputs:
        lexical: LexicalResult | None  # the term statistics (None: no searchable term)
        lexical_hits: list[Candidate]
        readable: Readable  # the records the search may read, by seq (the gate's rest cover counts over it)
        doclists: dict  # each term's doclist, read once per search (the gate's lifecycle probe reuses them)

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        s = given.settings
        terms = query_terms(given.query, s.lexical_max_terms)
        lut = readable_lookup(deps.index, given.mask)
        rec.io(inputs={"k": s.candidates_per_generator, "terms": terms, "readable_records": allowed_count(lut)})
        doclists: dict = {}
        if not terms:
            rec.skip("no searchable terms once stop words and operator syntax are removed")
            rec.io(outputs={"candidates": []})
            return self.Outputs(None, [], lut, doclists)
        found, result = lexical_candidates(deps.store, given.filter, lut, terms, s.candidates_per_generator, s.lexical_max_df_share,
                                           s.lexical_max_postings, readable_counts(deps, lut, given.mask), doclists)
        rec.io(outputs={"term_statistics": result.terms,
                        "dropped_terms": [{"term": t["term"], "documents": t["documents"], "reason": t["reason"]}
                                          for t in result.terms if not t["used"]],
                        "candidates": [{"id": c.record_id, "rank": c.lexical_rank, "lexical": round(c.lexical, 6),
                                        "terms": list(c.lexical_terms)} for c in found]})
        if not result.used_terms:
            rec.note("every query term is too common among the readable records to search")
        return self.Outputs(result, found, lut, doclists)
