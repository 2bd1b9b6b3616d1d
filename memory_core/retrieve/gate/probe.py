"""The lifecycle probe: on an empty answer, would superseded or expired records have passed?

It asks a historical search (the generators re-run with the historical statuses, handed to the
gate stage by whoever composes the pipeline: :func:`..generate.historical.historical_candidates`
in ``default_stages``) and counts the records it finds that are strong gate evidence but were
excluded by lifecycle alone. The empty reason then says so ("all 2 candidates filtered as
superseded ...; historical search includes them"). The gate runs no generator itself.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ...settings import RetrievalSettings
from ..filters import HardFilter, IndexMask, describe_as_of
from ..generate.lexical_score import LexicalResult, partial_score
from ..generate.name_stripped import RestQuery, full_entity_names, rest_query
from ..search_types import Candidate
from ..services import SearchServices
from . import model
from .handoffs import GateInputs
from .names import evidence_of, short_list_names
from .rest_cover import rest_cover
from .rules import GateFloors, NameRest, candidate_strong, rest_supported


class HistoricalSearch(Protocol):
    """The generators re-run under the search's filter widened to the historical statuses: the
    records found (seq -> candidate, with query cosines) and the lexical result."""

    def __call__(self, deps: SearchServices, *, settings: RetrievalSettings, query: str, filter: HardFilter,
                 mask: IndexMask | None, query_vector: np.ndarray | None, entities: list[dict],
                 doclists: dict) -> tuple[dict[int, Candidate], LexicalResult | None]: ...


def lifecycle_probe(deps: SearchServices, given: GateInputs, historical: HistoricalSearch, floors: GateFloors,
                    unknown: tuple[str, ...], in_query: set[str], summary: dict, known: RestQuery | None) -> dict:
    """Counts of the superseded and expired records that would have passed, and their ids."""
    found, lexical = historical(deps, settings=given.settings, query=given.query, filter=given.filter, mask=given.mask,
                                query_vector=given.query_vector, entities=given.entities, doclists=given.doclists)
    passing = []
    for cand in found.values():
        lapsed = cand.status == "provisional" and cand.seq not in given.pool
        kind = "expired" if (cand.status == "expired" or lapsed) else cand.status
        if kind in ("superseded", "expired") and candidate_strong(evidence_of(lexical, cand, in_query, unknown), floors):
            passing.append((kind, cand))
    # a question the known-name check refused: older records count only if they support the rest of it
    if passing and not probe_rest_supported(deps, given, lexical, [c for _, c in passing], floors, in_query, summary, known):
        passing = []
    counts = {"superseded": 0, "expired": 0, "passing": 0, "ids": []}
    for kind, cand in passing:
        counts[kind] += 1
        counts["passing"] += 1
        counts["ids"].append(cand.record_id)
    return counts


def probe_rest_supported(deps: SearchServices, given: GateInputs, lexical: LexicalResult | None, cands: list[Candidate],
                         floors: GateFloors, in_query: set[str], summary: dict, known: RestQuery | None) -> bool:
    """When the known-name check judged the question, would these older records have passed it
    too? True when the check did not judge it."""
    names = summary.get("known_names") or []
    short = bool(summary.get("known_names_short"))
    if not names and not full_entity_names(given.settings, given.query, given.entities, given.generated.get("entity", [])):
        names, short = short_list_names(given), True  # the gate refused before judging names: a short list still needs the rest
    if not names or not (floors.name_rule_on or short):
        return True
    rest = rest_query(deps, given.settings, given.query, given.entities, given.query_vector, names, [c.seq for c in cands], known)
    lexicals = [partial_score(lexical, c.lexical_terms, in_query) for c in cands if c.lexical_terms and lexical is not None]
    pairs = [(rest.cosines[c.seq], c.lexical) for c in cands if c.seq in rest.cosines]
    words = (rest_cover(deps, lexical, given.readable, given.mask, in_query, cands, rest.cosines)
             if floors.name_model_floor > -1.0 or short else None)
    support = NameRest(tuple(names), max((v for v, _ in pairs), default=None), max((v for v in lexicals if v is not None), default=None),
                       bare=rest.text is None,
                       both=max((model.rest_both(v, lex) for v, lex in pairs), default=None),
                       full_cosine=max((c.cosine for c in cands if c.cosine is not None), default=None),
                       full_lexical=max((c.lexical for c in cands if c.lexical is not None), default=None),
                       unheld=tuple(summary.get("unheld_names") or ()),
                       cover=words.cover if words else None, cover_joint=words.joint if words else None,
                       held=words.held if words else None, short=short)
    return rest_supported(support, floors)


def empty_reason(deps: SearchServices, given: GateInputs, historical: HistoricalSearch | None, floors: GateFloors, reason: str,
                 unknown: tuple[str, ...], in_query: set[str], summary: dict, known: RestQuery | None) -> str:
    """Why the search ends empty: the gate's reason, or that nothing passes the hard filter, or that
    only older records (superseded, expired) would have answered (the probe's counts go into
    ``summary``; no probe without a ``historical`` search)."""
    flt = given.filter
    if flt is not None and flt.as_of:  # the as-of set already holds every version live (or valid) then: no lifecycle probe
        if summary["candidates"] == 0:
            held = "live" if flt.as_of_mode == "memory" else "valid"
            outcome = given.filter_outcome
            if outcome is not None and outcome.reason:  # the filter stages' account (grants, window, as-of set)
                return outcome.reason
            if not flt.as_of_seqs:
                return f"nothing was {held} at {flt.as_of} in the readable scopes ({flt.describe()})"
            return f"no record {held} at {flt.as_of} passes the hard filter ({flt.describe()})"
        return f"{reason} (searched {describe_as_of(flt.as_of, flt.as_of_mode)})"
    if summary["candidates"] == 0:
        reason = f"no record in the readable scopes passes the hard filter ({given.filter.describe()})"
    outcome = given.filter_outcome  # the filter stages' own account: how many readable records, and why none
    if summary["candidates"] == 0 and outcome is not None and outcome.reason:
        reason = outcome.reason
    if not given.request.historical and historical is not None:
        probe = lifecycle_probe(deps, given, historical, floors, unknown, in_query, summary, known)
        summary["lifecycle_probe"] = probe
        if probe["passing"]:
            kinds = [k for k in ("superseded", "expired") if probe[k]]
            detail = ", ".join(f"{probe[k]} {k}" for k in kinds)
            reason = f"all {probe['passing']} candidates filtered as {' or '.join(kinds)} ({detail}); historical search includes them"
    window = outcome.window_note() if outcome is not None and summary["candidates"] else None
    return f"{window}; of the rest, {reason}" if window else reason  # the window first: it acted before the gate
