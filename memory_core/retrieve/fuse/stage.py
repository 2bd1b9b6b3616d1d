"""The fusion stage: the generators' lists merged into one candidate pool and fused by RRF."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...settings import RetrievalSettings
from ..generate.candidates import GENERATORS, merge_hits
from ..generate.name_stripped import RestQuery, rest_list
from ..recorder import StageRecorder
from ..search_types import Candidate
from ..services import SearchServices
from .rrf import rrf_fuse, tied_ranks


def fusion_lists(generated: dict[str, list[int]], k: int) -> tuple[dict[str, list[int]], str | None]:
    """The generator lists that enter the fusion, and why the entity list was left out (if it was).

    The entity list is ordered by recency, not relevance. When it is full (the matched entities
    link at least as many readable records as a generator may return, as a speaker or a big
    project does), it is no evidence for any one record, and fusing it would push relevant records
    down; it then stays out of the fusion and counts only at the gate.
    """
    lists = {name: generated.get(name, []) for name in GENERATORS}
    if len(lists["entity"]) < k:
        return lists, None
    del lists["entity"]
    return lists, f"entity list left out of the fusion: the matched entities link {k} or more readable records"


class FusionStage:
    """Reciprocal-rank fusion of the dense, lexical and (when selective) entity lists, and (for a
    query naming an entity whose list is full) the pool ordered by cosine to the name-stripped question."""

    name = "fusion"

    @dataclass(slots=True)
    class Inputs:
        settings: RetrievalSettings
        query: str
        entities: list[dict]
        query_vector: np.ndarray | None
        lexical_hits: list[Candidate]
        entity_hits: list[Candidate]
        dense_hits: list[Candidate]

    @dataclass(slots=True)
    class Outputs:
        pool: dict[int, Candidate]  # every candidate any generator proposed, by seq
        generated: dict[str, list[int]]  # each generator's list, as seqs in its own order
        ranking: list[Candidate]
        rest_query: RestQuery | None  # the name-stripped question, when the fourth list needed it

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        s = given.settings
        pool, generated = merge_hits([("lexical", given.lexical_hits), ("entity", given.entity_hits), ("dense", given.dense_hits)])
        lists, left_out = fusion_lists(generated, s.candidates_per_generator)
        rest = None
        if left_out:
            # The same names lift every cosine of the dense list; the pool ordered by cosine to the
            # question without them ranks what the rest of the question asks about.
            stripped, rest = rest_list(deps, s, given.query, given.entities, given.query_vector, pool, generated["entity"])
            if stripped:
                lists["name_stripped"] = stripped
        ranks = {}
        if lists.get("entity"):
            # An exact alias match is a yes-or-no signal and the list's order is recency, which says
            # nothing about the question: records linked to equally many of the query's names tie.
            ranks["entity"] = tied_ranks([len(pool[seq].entities) for seq in lists["entity"]])
        fused = rrf_fuse(lists, s.rrf_k, ranks)
        ranking = []
        for rank, (seq, score) in enumerate(fused, start=1):
            cand = pool[seq]
            cand.fused_rank, cand.fused_score, cand.score = rank, score, score
            ranking.append(cand)
        fused_seqs = {seq for seq, _ in fused}
        for seq in generated["entity"]:  # entity-only candidates still reach the gate
            if seq not in fused_seqs:
                cand = pool[seq]
                cand.fused_rank, cand.fused_score, cand.score = len(ranking) + 1, 0.0, 0.0
                ranking.append(cand)
        if left_out:
            rec.note(left_out)
        elif "entity" in ranks and len(set(ranks["entity"])) < len(ranks["entity"]):
            rec.note("entity list fused with ties: records linked to the same number of the query's names share the "
                     "mean of their ranks (the list is in recency order, which says nothing about the question)")
        if "name_stripped" in lists:
            rec.note(f"name-stripped list fused: the candidates ordered by cosine to \"{rest.text}\"")
        rec.io(inputs={name: len(generated.get(name, [])) for name in GENERATORS} | {"rrf_k": s.rrf_k, "fused_lists": sorted(lists)},
               outputs={"fused": [c.brief() for c in ranking]}
               | ({"name_stripped": [pool[q].record_id for q in lists["name_stripped"]]} if "name_stripped" in lists else {}))
        return self.Outputs(pool, generated, ranking, rest)
