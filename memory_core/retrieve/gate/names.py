"""The gate's view of the names in a query: which are unknown to the memory, which the matched
entities spell, and how well the rest of a question naming a known entity is supported.

A name is a capitalised word that is not the query's first word, a stop word, or a month or
weekday. The known-name rules (:mod:`.rules`) judge a query that spells the name of a known
entity: its name says little about which record answers, so the rest of the question must find
support (the name-stripped cosines, the lexical score on the other words, and the word-level
signals of :mod:`.rest_cover`).
"""

from __future__ import annotations

from ...text import MONTHS_AND_WEEKDAYS, STOP_WORDS, normalise_alias, query_terms, words
from ...store.search_queries import entity_links_among
from ..generate.lexical_score import LexicalResult, partial_score
from ..generate.name_stripped import RestQuery, known_names_in_query, rest_query
from ..search_types import Candidate
from ..services import SearchServices
from . import model
from .handoffs import GateInputs
from .rest_cover import RestCover, rest_cover
from .rules import Evidence, GateFloors, NameRest


def query_names(query: str) -> list[str]:
    """Capitalised words of the query other than its first word, stop words, months and weekdays."""
    names: list[str] = []
    for position, chunk in enumerate(query.split()):
        if position == 0:
            continue
        for word in words(chunk):
            key = word.casefold()
            if word[0].isupper() and key not in STOP_WORDS and key not in MONTHS_AND_WEEKDAYS and word not in names:
                names.append(word)
    return names


def unknown_names(query: str, result: LexicalResult | None) -> list[str]:
    """The query's names when none of them is held by a readable record; else ``[]``.

    "What did Caroline research?" asked of a memory in which no record mentions Caroline is about
    someone this memory has never seen; the gate then asks more of the cosine signal, which a
    question's phrasing alone can lift. When any name of the query is held ("where does the user
    live, Porto or Lisbon?"), the query is partly about known things and nothing changes. Words
    left out of lexical search as too common count as held.
    """
    if result is None:
        return []
    held = {t["term"]: t["documents"] for t in result.terms}
    names = query_names(query)
    if not names or any(held.get(word.casefold()) != 0 for word in names):
        return []
    return names


def unheld_names(query: str, result: LexicalResult | None) -> list[str]:
    """The query's names that no readable record holds, whatever the others ("Which Disney movie did
    Sam mention?" asked of a memory that knows Sam but never saw "Disney": ``["Disney"]``)."""
    if result is None:
        return []
    held = {t["term"]: t["documents"] for t in result.terms}
    return [word for word in query_names(query) if held.get(word.casefold()) == 0]


def name_terms(entities: list[dict]) -> set[str]:
    """Query terms that belong to the matched entities' names (what "the rest of the question" leaves out)."""
    return {t for e in entities for key in (e.get("matched") or "", e["name"]) for t in query_terms(key, 64)}


def evidence_of(lexical: LexicalResult | None, cand: Candidate, names_in_query: set[str], unknown: tuple[str, ...]) -> Evidence:
    """The gate's view of one candidate (see :func:`.rules.candidate_strong`)."""
    names = tuple(e["name"] for e in cand.entities)
    rest = None
    if names and lexical is not None:
        rest = partial_score(lexical, cand.lexical_terms, names_in_query | {t for n in names for t in query_terms(n, 64)})
    return Evidence(cand.cosine, cand.lexical, names, rest, unknown)


def short_list_names(given: GateInputs) -> list[str]:
    """Known names the query spells whose entity list is short (fewer than ``candidates_per_generator``
    readable records), when the short-list rule is on: such a name still needs the rest of the
    question supported (rules.short_list_supported). A name the caller also gave as an entity hint
    is left out: the caller said the search is about that entity, so what is linked to it is on topic."""
    s = given.settings
    if not s.short_list_names_need_rest or len(given.generated.get("entity", [])) >= s.candidates_per_generator:
        return []
    hinted = {normalise_alias(h) for h in given.request.entity_hints}
    return [name for name in known_names_in_query(given.query, given.entities)
            if not hinted & {normalise_alias(key) for e in given.entities if e["name"] == name
                             for key in (e.get("matched") or "", e["name"], e.get("id") or "")}]


def linked_to_all(deps: SearchServices, given: GateInputs, names: list[str]) -> str | None:
    """A candidate linked to every one of two or more named entities ("what did I discuss with Emeka
    about Helix?"): names that occur together are a specific match, not a mention. Its id, or None.

    Only a candidate that is strong on its own counts (its cosine or lexical score at its floor): a
    record that merely links both names and shares nothing else with the question ("When did Alice
    join Northwind?" against "The user leads product for Atlas here at Northwind") is two mentions,
    not an answer, and the rest of the question is judged as for one name."""
    name_of = {e["id"]: e["name"] for e in given.entities if e["name"] in names}  # a name may be several entities (scopes)
    s = given.settings
    strong = [c for c in given.ranking if (c.cosine is not None and c.cosine >= s.cosine_floor)
              or (c.lexical is not None and c.lexical >= s.lexical_floor)]
    if len(set(name_of.values())) < 2 or not strong:
        return None
    by_id = {c.record_id: c for c in strong}
    linked: dict[str, set[str]] = {}
    for record_id, entity_id in entity_links_among(deps.store, list(name_of), list(by_id)):
        linked.setdefault(record_id, set()).add(name_of[entity_id])
    wanted = set(name_of.values())
    found = sorted((by_id[r] for r, held in linked.items() if held >= wanted), key=lambda c: c.fused_rank or 0)
    return found[0].record_id if found else None


def name_rest(deps: SearchServices, given: GateInputs, names: list[str], in_query: set[str], floors: GateFloors,
              every_signal: bool, known: RestQuery | None, short: bool = False) -> tuple[NameRest, RestQuery | None, RestCover | None]:
    """For a query naming known entities: the best support the rest of the question finds among
    the candidates, the name-stripped question (``known``, or made here) and the word-level cover.

    The lexical score on the other words is free; the name-stripped cosines come from the fusion's
    fourth list when it ran, else from one more embedding. Under the two-floor rule they are
    computed only when the lexical support does not already settle it; the known-name model, the
    short-list rule (``short``) and ``every_signal`` (calibration passes) need every signal."""
    ranking, lexical_result = given.ranking, given.lexical
    lexical = None
    if lexical_result is not None:
        scores = [partial_score(lexical_result, c.lexical_terms, in_query) for c in ranking if c.lexical_terms]
        scores = [v for v in scores if v is not None]
        lexical = round(max(scores), 6) if scores else None
    full = {"full_cosine": max((c.cosine for c in ranking if c.cosine is not None), default=None),
            "full_lexical": max((c.lexical for c in ranking if c.lexical is not None), default=None),
            "unheld": tuple(unheld_names(given.query, lexical_result))}
    wants_model = floors.name_model_floor > -1.0 or short
    if not (every_signal or wants_model) and lexical is not None and lexical >= floors.name_rest_lexical:
        return NameRest(tuple(names), None, lexical, **full), known, None
    joint = linked_to_all(deps, given, names)
    if joint is not None and not every_signal:
        return NameRest(tuple(names), None, lexical, joint=joint, short=short, **full), known, None
    if short and lexical is not None and lexical >= floors.entity_support_lexical and not every_signal:
        return NameRest(tuple(names), None, lexical, short=True, **full), known, None
    rest = rest_query(deps, given.settings, given.query, given.entities, given.query_vector, names, [c.seq for c in ranking], known)
    cosines = [(rest.cosines[c.seq], c.lexical) for c in ranking if c.seq in rest.cosines]
    both = max((model.rest_both(v, lex) for v, lex in cosines), default=None)
    cover = (rest_cover(deps, lexical_result, given.readable, given.mask, in_query, ranking, rest.cosines)
             if wants_model or every_signal else None)
    return NameRest(tuple(names), max((v for v, _ in cosines), default=None), lexical, bare=rest.text is None, joint=joint,
                    both=None if both is None else round(both, 6), cover=cover.cover if cover else None,
                    cover_joint=cover.joint if cover else None, held=cover.held if cover else None, short=short, **full), rest, cover
