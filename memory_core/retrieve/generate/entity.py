"""The entity generator: exact alias matches of the query's n-grams and the caller's hints, and
the records linked to the matched entities under the hard filter."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import RetrievalSettings
from ...store.search_queries import entities_named, records_linked_to
from ...text import normalise_alias, query_mentions
from ..filters import HardFilter
from ..recorder import StageRecorder
from ..request import SearchRequest
from ..search_types import Candidate
from ..services import SearchServices
from .candidates import candidate_from_row

ENTITY_LINK_SCAN = 4  # links examined per matched entity, as a multiple of k (newest links first)


def entity_candidates(store, flt: HardFilter, entities: list[dict[str, str]], k: int) -> list[Candidate]:
    """Records linked to the matched entities, passing the filter: those linked to more of them
    first, then the most recent (the fusion treats records linked to equally many as tied).

    Only the ``ENTITY_LINK_SCAN * k`` most recently made links of each entity are examined, so an
    entity linked to thousands of records (a big project) costs no more than a small one.
    """
    if not entities:
        return []
    by_id = {e["id"]: e for e in entities}
    out = []
    for rank, row in enumerate(records_linked_to(store, flt, list(by_id), ENTITY_LINK_SCAN * k, k), start=1):
        cand = candidate_from_row(row)
        cand.entity_rank = rank
        # ordered by name (then id): ids are random, and nothing shown may depend on them
        eids = sorted(set(row["entity_ids"].split(",")), key=lambda eid: (by_id[eid]["name"], eid))
        cand.entities = [{"id": eid, "name": by_id[eid]["name"]} for eid in eids]
        out.append(cand)
    return out


def lookup_keys(query: str, hints: list[str], max_ngram: int) -> tuple[list[str], list[str]]:
    """The alias keys to look up (query n-grams, then each hint as a whole name) and the hints
    that are entity ids."""
    keys = query_mentions(query, max_ngram)
    for hint in hints:
        key = normalise_alias(hint)
        if key and key not in keys:
            keys.append(key)
    return keys, [h for h in hints if h.startswith("ent_")]


class EntityStage:
    """Entities the query or the hints name (in readable scopes), and their linked records."""

    name = "entity"

    @dataclass(slots=True)
    class Inputs:
        query: str
        request: SearchRequest
        settings: RetrievalSettings
        filter: HardFilter

    @dataclass(slots=True)
    class Outputs:
        entities: list[dict]  # the matched entities: id, name, kind and the alias (or id) that matched
        entity_hits: list[Candidate]

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        s, hints = given.settings, given.request.entity_hints
        keys, hint_ids = lookup_keys(given.query, hints, s.entity_max_ngram)
        entities = entities_named(deps.store, given.filter.scopes, keys, hint_ids)
        rec.io(inputs={"k": s.candidates_per_generator, "lookup_keys": len(keys), "hints": list(hints)},
               outputs={"entities": entities})
        found = entity_candidates(deps.store, given.filter, entities, s.candidates_per_generator)
        rec.io(outputs={"candidates": [{"id": c.record_id, "rank": c.entity_rank, "entities": [e["id"] for e in c.entities]} for c in found]})
        if not entities:
            rec.note("no alias in the query or hints names an entity in a readable scope")
        return self.Outputs(entities, found)
