"""The gate's decision: small pure functions over the signals a result set leaves.

A candidate is **strong** when its cosine reaches the cosine floor (the unknown-name floor when the
query's names are all unknown to the readable records), its lexical score the lexical floor, or
it is an exact entity match supported by the rest of the question (its cosine at the entity-support
floor, or its lexical score on the non-name words at theirs). A result set passes when some
candidate is strong and, for a query naming a known entity, the rest of the question finds
support (:func:`rest_supported`: the known-name model, the two-floor rule, or the short-list rule).

Each signal is one candidate's, so "some candidate is strong" is decided by the best value of
each signal over the set (:class:`SetSignals`): the pipeline's gate stage and the evaluation
harness's calibrator both call :func:`passes` on them, so there is one gate, not a copy. Why a
decision went as it did, in words, is :mod:`.reasons`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from . import model


@dataclass(frozen=True)
class GateFloors:
    """The gate's thresholds (the retrieval settings of the same names)."""

    cosine: float
    lexical: float
    entity_support_cosine: float
    entity_support_lexical: float
    cosine_unknown_name: float = math.inf
    name_rest_cosine: float = -math.inf  # -inf: a query naming a known entity needs no support beyond the floors
    name_rest_lexical: float = math.inf
    name_model_floor: float = -1.0  # -1: the known-name rule uses the two floors above instead of the model
    name_model_weights: tuple[float, ...] = ()  # bias, then one weight per model.FEATURES
    short_list_names: bool = False  # a name linking few records needs support for the rest of the question too

    @classmethod
    def of(cls, settings) -> "GateFloors":
        return cls(settings.cosine_floor, settings.lexical_floor, settings.entity_support_cosine, settings.entity_support_lexical,
                   settings.cosine_floor_unknown_name, settings.name_rest_cosine, settings.name_rest_lexical,
                   settings.name_model_floor, tuple(settings.name_model_weights), settings.short_list_names_need_rest)

    @property
    def name_rule_on(self) -> bool:
        """Does a query naming a known entity need support for the rest of it (model or floors)?"""
        return self.name_model_floor > -1.0 or self.name_rest_cosine > -1.0

    def cosine_for(self, unknown_names: bool) -> float:
        """The cosine floor that applies: the unknown-name floor when the query's names are all unknown."""
        return self.cosine_unknown_name if unknown_names else self.cosine


@dataclass(frozen=True)
class Evidence:
    """One candidate's gate signals: cosine, lexical score, matched entity names, and the lexical
    score on the query words other than those names (None when the query is only the name)."""

    cosine: float | None
    lexical: float | None
    entities: tuple[str, ...] = ()
    rest_lexical: float | None = None
    unknown_names: tuple[str, ...] = ()  # of the query: capitalised words no readable record holds


@dataclass(frozen=True)
class SetSignals:
    """The best value of each gate signal over a result set (what the search log keeps of it)."""

    cosine: float | None
    lexical: float | None
    entity_cosine: float | None = None  # best cosine among entity-matched candidates
    entity_rest: float | None = None  # best rest-of-question lexical score among entity-matched candidates
    unknown_names: bool = False  # the query's names are all unknown to the readable records

    @classmethod
    def of(cls, evidence: Sequence[Evidence]) -> "SetSignals":
        entity = [e for e in evidence if e.entities]
        return cls(max((e.cosine for e in evidence if e.cosine is not None), default=None),
                   max((e.lexical for e in evidence if e.lexical is not None), default=None),
                   max((e.cosine for e in entity if e.cosine is not None), default=None),
                   max((e.rest_lexical for e in entity if e.rest_lexical is not None), default=None),
                   bool(evidence) and bool(evidence[0].unknown_names))


@dataclass(frozen=True)
class NameRest:
    """For a query that names known entities: those names, and how well the best candidate matches
    the rest of the question (cosine of the name-stripped query; lexical score on the other words).
    ``None`` values: nothing is left once the names are out, or no candidate holds another word."""

    names: tuple[str, ...]
    cosine: float | None
    lexical: float | None
    bare: bool = False  # nothing but the names (and stop words) in the query
    joint: str | None = None  # a candidate linked to every named entity (two or more names)
    both: float | None = None  # best rest cosine + 0.5 x lexical score of one candidate (model.rest_both)
    full_cosine: float | None = None  # best cosine of the set to the whole query
    full_lexical: float | None = None  # best lexical score of the set
    unheld: tuple[str, ...] = ()  # names in the query that no readable record holds (names.unheld_names)
    cover: float | None = None  # best stem coverage of the rest's key terms by one candidate (rest_cover)
    cover_joint: float | None = None  # best rest cosine + 0.5 x that coverage of one candidate
    held: float | None = None  # share of the rest's key terms some readable record holds (by stem)
    short: bool = False  # the names link few readable records: the short-list rule judges, not the model

    def model_values(self) -> tuple[float | None, ...]:
        """The known-name model's features, in model.FEATURES order."""
        return (self.cosine, self.lexical, self.both, self.full_cosine, self.full_lexical, 0.0 if self.unheld else 1.0,
                self.cover, self.cover_joint, self.held)


def _at_least(value: float | None, floor: float) -> bool:
    return value is not None and value >= floor


def _clears(cosine, lexical, entity_cosine, entity_rest, unknown_names: bool, floors: GateFloors) -> bool:
    return (_at_least(cosine, floors.cosine_for(unknown_names)) or _at_least(lexical, floors.lexical)
            or _at_least(entity_cosine, floors.entity_support_cosine) or _at_least(entity_rest, floors.entity_support_lexical))


def candidate_strong(ev: Evidence, floors: GateFloors) -> bool:
    """Is this candidate strong evidence that the query is answerable (see the module docstring)?"""
    entity = bool(ev.entities)
    return _clears(ev.cosine, ev.lexical, ev.cosine if entity else None, ev.rest_lexical if entity else None,
                   bool(ev.unknown_names), floors)


def set_strong(signals: SetSignals, floors: GateFloors) -> bool:
    """Is some candidate of the set strong? (Decided by the set's best value of each signal.)"""
    return _clears(signals.cosine, signals.lexical, signals.entity_cosine, signals.entity_rest, signals.unknown_names, floors)


def model_probability(rest: NameRest, floors: GateFloors) -> tuple[float, tuple[float | None, ...]]:
    """The known-name model's probability for ``rest`` and the values it used."""
    values = rest.model_values()[:len(floors.name_model_weights) - 1]  # the signals the weights use
    return model.probability(floors.name_model_weights, values), values


def short_list_cosine_floor(rest: NameRest, floors: GateFloors) -> float:
    """The short-list rule's cosine floor: the unknown-name floor too when the query also spells a
    name no readable record holds ("What is Bob's GitHub username?"), as any query naming such a thing must."""
    return max(floors.cosine, floors.cosine_unknown_name) if rest.unheld else floors.cosine


def short_list_supported(rest: NameRest, floors: GateFloors) -> bool:
    """A name that links few records: the rest of the question must clear the floors a question
    without the name would (a cosine at the cosine floor, alone or joined with half the candidate's
    stem coverage of the other words, or the entity-support lexical floor on the other words)."""
    if not floors.short_list_names:
        return True
    cosine_floor = short_list_cosine_floor(rest, floors)
    return (_at_least(rest.cosine, cosine_floor) or _at_least(rest.cover_joint, cosine_floor)
            or _at_least(rest.lexical, floors.entity_support_lexical))


def rest_supported(rest: NameRest | None, floors: GateFloors) -> bool:
    """Does the rest of a question that names a known entity find support (a mention of a name is
    not relevance)? True when the query names no known entity, is only the name, names several
    entities that some candidate links together, or the rule is off. With ``name_model_floor``
    above -1 the known-name model decides (:mod:`.model`); otherwise the two floors do."""
    if rest is None or not rest.names or rest.bare or rest.joint:
        return True  # "who is Alice?": the name is the whole question, and records about Alice answer it
    if rest.short:
        return short_list_supported(rest, floors)
    if not floors.name_rule_on:
        return True
    if floors.name_model_floor > -1.0:
        return model_probability(rest, floors)[0] >= floors.name_model_floor
    return _at_least(rest.cosine, floors.name_rest_cosine) or _at_least(rest.lexical, floors.name_rest_lexical)


def passes(signals: SetSignals, floors: GateFloors, rest: NameRest | None = None) -> bool:
    """The gate's decision on a result set: some candidate is strong, and the rest of a question
    naming a known entity finds support."""
    return set_strong(signals, floors) and rest_supported(rest, floors)


def below_result_floor(cosine: float | None, lexical: float | None, floor: float) -> bool:
    """In a result set that passed, is a candidate that is not strong itself weak on everything
    (below ``result_floor`` on both cosine and lexical score), so it is dropped?"""
    return not (_at_least(cosine, floor) or _at_least(lexical, floor))
