"""Pure scoring functions of the pipeline: fusion, freshness, the gate, duplicate collapse and the
token budget. No I/O; each is tested directly (and with hypothesis)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..text import count_tokens, truncate_to_tokens  # noqa: F401 (used by the budget stage; their home is memory_core.text)
from . import gate_model

K = TypeVar("K", bound=Hashable)


# -- reciprocal-rank fusion ----------------------------------------------------------------------


def tied_ranks(groups: Sequence[Hashable]) -> list[float]:
    """Fractional ranks for a list whose items come in tied groups: ``groups`` holds each position's
    group (equal groups adjacent), and every item gets the mean of the positions its group spans
    ([a, a, a, b] gives [2, 2, 2, 4]), so a tie moves no weight into or out of the list."""
    out: list[float] = []
    start = 0
    while start < len(groups):
        end = start
        while end + 1 < len(groups) and groups[end + 1] == groups[start]:
            end += 1
        out.extend([(start + end) / 2 + 1] * (end - start + 1))
        start = end + 1
    return out


def rrf_fuse(ranked: Mapping[str, Sequence[K]], k: float,
             ranks: Mapping[str, Sequence[float]] | None = None) -> list[tuple[K, float]]:
    """Reciprocal-rank fusion: each item scores the sum of 1/(k + rank) over the lists holding it.

    Ranks start at 1; ``ranks`` may give a list's ranks explicitly, one per position (tied items
    share one, :func:`tied_ranks`). Ties are broken by the item's best single rank, then by the
    number of lists holding it, then by the item itself, so the order never depends on the order of
    the lists.
    """
    if k <= 0:
        raise ValueError("the RRF constant must be positive")
    ranks = ranks or {}
    scores: dict[K, float] = {}
    best: dict[K, float] = {}
    hits: dict[K, int] = {}
    for name in sorted(ranked):  # a fixed summation order keeps float sums (and ties) identical
        items = ranked[name]
        given = ranks.get(name)
        if given is not None and len(given) != len(items):
            raise ValueError(f"list {name!r} has {len(items)} items but {len(given)} ranks")
        seen: set[K] = set()
        for position, item in enumerate(items, start=1):
            rank = given[position - 1] if given is not None else position
            if item in seen:
                continue  # a list naming an item twice counts it once, at its better rank
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
            best[item] = min(best.get(item, rank), rank)
            hits[item] = hits.get(item, 0) + 1
    order = sorted(scores, key=lambda item: (-scores[item], best[item], -hits[item], item))
    return [(item, scores[item]) for item in order]


# -- episodic freshness --------------------------------------------------------------------------


def freshness_factor(age_days: float, half_life_days: float, weight: float) -> float:
    """Multiplier for an episodic record's fused score: ``(1 - w) + w * 0.5 ** (age / half_life)``.

    A record from the future (or now) gets 1.0; with ``weight`` 0 every record gets 1.0; the factor
    never drops below ``1 - weight``.
    """
    if half_life_days <= 0:
        raise ValueError("the half-life must be positive")
    weight = min(max(weight, 0.0), 1.0)
    age = max(age_days, 0.0)
    return (1.0 - weight) + weight * math.pow(0.5, age / half_life_days)


# -- the empty-result gate ----------------------------------------------------------------------


def _fmt(value: float, floor: float, digits: int) -> tuple[str, str]:
    """Format value and floor so that a comparison shown never reads like '0.40 < floor 0.40'."""
    while digits < 6:
        a, b = f"{value:.{digits}f}", f"{floor:.{digits}f}"
        if a != b or value == floor:
            return a, b
        digits += 1
    return f"{value:.6f}", f"{floor:.6f}"


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
    name_model_weights: tuple[float, ...] = ()  # bias, then one weight per gate_model.FEATURES
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
    both: float | None = None  # best rest cosine + 0.5 x lexical score of one candidate (gate_model.rest_both)
    full_cosine: float | None = None  # best cosine of the set to the whole query
    full_lexical: float | None = None  # best lexical score of the set
    unheld: tuple[str, ...] = ()  # names in the query that no readable record holds (lexical.unheld_names)
    cover: float | None = None  # best stem coverage of the rest's key terms by one candidate (rest_cover)
    cover_joint: float | None = None  # best rest cosine + 0.5 x that coverage of one candidate
    held: float | None = None  # share of the rest's key terms some readable record holds (by stem)
    short: bool = False  # the names link few readable records: the short-list rule judges, not the model

    def model_values(self) -> tuple[float | None, ...]:
        """The known-name model's features, in gate_model.FEATURES order."""
        return (self.cosine, self.lexical, self.both, self.full_cosine, self.full_lexical, 0.0 if self.unheld else 1.0,
                self.cover, self.cover_joint, self.held)


def name_rest_check(rest: NameRest | None, floors: GateFloors) -> tuple[bool, str]:
    """Does the rest of a question that names a known entity find support (a mention of a name is
    not relevance)? True with no reason when the query names no known entity, is only the name, names
    several entities that some candidate links together, or the rule is off. With ``name_model_floor``
    above -1 the known-name model decides (:mod:`.gate_model`); otherwise the two floors do."""
    if rest is None or not rest.names:
        return True, ""
    if rest.bare or rest.joint:
        return True, ""  # "who is Alice?": the name is the whole question, and records about Alice answer it
    names = ", ".join(n.casefold() for n in rest.names)
    if rest.short:
        return short_list_check(rest, floors, names)
    if not floors.name_rule_on:
        return True, ""
    if floors.name_model_floor > -1.0:
        values = rest.model_values()[:len(floors.name_model_weights) - 1]  # the signals the weights use
        p = gate_model.probability(floors.name_model_weights, values)
        if p >= floors.name_model_floor:
            return True, ""
        a, b = _fmt(p, floors.name_model_floor, 2)
        return False, (f"mentions {names}, but the rest of the question finds too little support (known-name model: "
                       f"p {a} < {b} from {gate_model.describe(values)})")
    if rest.cosine is not None and rest.cosine >= floors.name_rest_cosine:
        return True, ""
    if rest.lexical is not None and rest.lexical >= floors.name_rest_lexical:
        return True, ""
    parts = []
    if rest.cosine is not None:
        a, b = _fmt(rest.cosine, floors.name_rest_cosine, 2)
        parts.append(f"best cosine without the name {a} < {b}")
    if rest.lexical is None:
        parts.append("no record holds another word of the question")
    elif math.isfinite(floors.name_rest_lexical):
        a, b = _fmt(rest.lexical, floors.name_rest_lexical, 2)
        parts.append(f"best lexical score on the other words {a} < {b}")
    return False, f"mentions {names}, but nothing about the rest of the question ({'; '.join(parts)})"


def short_list_check(rest: NameRest, floors: GateFloors, names: str) -> tuple[bool, str]:
    """A name that links few records: the rest of the question must clear the floors a question
    without the name would (a cosine at the cosine floor, alone or joined with half the candidate's
    stem coverage of the other words, or the entity-support lexical floor on the other words)."""
    if not floors.short_list_names:
        return True, ""
    # The query also spells a name no readable record holds ("What is Bob's GitHub username?"): the
    # rest must then clear the unknown-name floor, as any query naming such a thing must (gate_check).
    cosine_floor = max(floors.cosine, floors.cosine_unknown_name) if rest.unheld else floors.cosine
    for value in (rest.cosine, rest.cover_joint):
        if value is not None and value >= cosine_floor:
            return True, ""
    if rest.lexical is not None and rest.lexical >= floors.entity_support_lexical:
        return True, ""
    parts = []
    for label, value, floor in (("best cosine without the name", rest.cosine, cosine_floor),
                                ("with half its coverage of the other words", rest.cover_joint, cosine_floor),
                                ("best lexical score on the other words", rest.lexical, floors.entity_support_lexical)):
        if value is not None:
            a, b = _fmt(value, floor, 2)
            parts.append(f"{label} {a} < {b}")
    if rest.lexical is None:
        parts.append("no record holds another word of the question")
    if rest.unheld and cosine_floor > floors.cosine:
        parts.append(f"the cosine floor is {cosine_floor:g} because no readable record holds {', '.join(rest.unheld)}")
    return False, f"mentions {names}, but nothing about the rest of the question ({'; '.join(parts)})"


@dataclass(frozen=True)
class Evidence:
    """One candidate's gate signals: cosine, lexical score, matched entity names, and the lexical
    score on the query words other than those names (None when the query is only the name)."""

    cosine: float | None
    lexical: float | None
    entities: tuple[str, ...] = ()
    rest_lexical: float | None = None
    unknown_names: tuple[str, ...] = ()  # of the query: capitalised words no readable record holds


def _cosine_floor(ev: "Evidence", floors: "GateFloors") -> tuple[float, str]:
    """The cosine floor that applies, and how to name it in a reason."""
    if ev.unknown_names:
        names = ", ".join(ev.unknown_names)
        return floors.cosine_unknown_name, f"floor {{}} for a query naming {names}, which no readable record holds"
    return floors.cosine, "floor {}"


def gate_check(ev: Evidence, floors: GateFloors) -> tuple[bool, str]:
    """Is this candidate strong evidence that the query is answerable, and why (or why not)?

    Strong on any one of: cosine at or above its floor; lexical score at or above its floor; an
    exact entity match *with support for the rest of the question* (cosine at or above the lower
    support floor, or the non-name words' lexical score at or above theirs). A name alone is not
    relevance: "how does Alice like her answers formatted?" names Alice but asks about formatting.
    """
    floor, label = _cosine_floor(ev, floors)
    if ev.cosine is not None and ev.cosine >= floor:
        a, b = _fmt(ev.cosine, floor, 2)
        return True, f"cosine {a} >= {label.format(b)}"
    if ev.lexical is not None and ev.lexical >= floors.lexical:
        a, b = _fmt(ev.lexical, floors.lexical, 2)
        return True, f"lexical score {a} >= floor {b}"
    if ev.entities:
        names = ", ".join(ev.entities)
        if ev.cosine is not None and ev.cosine >= floors.entity_support_cosine:
            a, b = _fmt(ev.cosine, floors.entity_support_cosine, 2)
            return True, f"entity match ({names}) supported by cosine {a} >= {b}"
        if ev.rest_lexical is not None and ev.rest_lexical >= floors.entity_support_lexical:
            a, b = _fmt(ev.rest_lexical, floors.entity_support_lexical, 2)
            return True, f"entity match ({names}) supported by the rest of the question: lexical {a} >= {b}"
    return False, weak_reason(ev, floors, prefix="")


def _entity_text(ev: Evidence, floors: GateFloors) -> str:
    if not ev.entities:
        return "no entity match"
    parts = []
    if ev.cosine is not None:
        a, b = _fmt(ev.cosine, floors.entity_support_cosine, 2)
        parts.append(f"cosine {a} < {b}")
    if ev.rest_lexical is None:
        parts.append("the query has no other words")
    else:
        a, b = _fmt(ev.rest_lexical, floors.entity_support_lexical, 2)
        parts.append(f"rest of the question lexical {a} < {b}")
    return f"entity match ({', '.join(ev.entities)}) without support for the rest of the question ({'; '.join(parts)})"


def weak_reason(ev: Evidence, floors: GateFloors, prefix: str = "best ") -> str:
    """'best cosine 0.31 < floor 0.45; best lexical score 0.20 < floor 0.75; no entity match'."""
    if ev.cosine is None:
        dense = "no dense candidate"
    else:
        floor, label = _cosine_floor(ev, floors)
        a, b = _fmt(ev.cosine, floor, 2) if math.isfinite(floor) else (f"{ev.cosine:.2f}", "inf")
        dense = f"{prefix}cosine {a} < {label.format(b)}"
    if ev.lexical is None:
        lexical = "no lexical match"
    else:
        a, b = _fmt(ev.lexical, floors.lexical, 2)
        lexical = f"{prefix}lexical score {a} < floor {b}"
    return f"{dense}; {lexical}; {_entity_text(ev, floors)}"


def gate_set(evidence: Sequence[Evidence], floors: GateFloors, rest: NameRest | None = None) -> tuple[int | None, str]:
    """The gate on a result set: the index of the first (best-ranked) strong candidate and why it
    is strong, or None and why every candidate is weak (judged on the best value of each signal).

    A query naming known entities (``rest``) passes only if, besides a strong candidate, the rest
    of the question finds support (:func:`name_rest_check`)."""
    for i, ev in enumerate(evidence):
        passed, reason = gate_check(ev, floors)
        if passed:
            supported, why_not = name_rest_check(rest, floors)
            if not supported:
                return None, f"{why_not}; the name alone matched ({reason})"
            return i, reason
    if not evidence:
        return None, "no candidates"
    best = Evidence(
        cosine=max((e.cosine for e in evidence if e.cosine is not None), default=None),
        lexical=max((e.lexical for e in evidence if e.lexical is not None), default=None),
        entities=tuple(dict.fromkeys(n for e in evidence for n in e.entities)),
        rest_lexical=max((e.rest_lexical for e in evidence if e.entities and e.rest_lexical is not None), default=None),
        unknown_names=evidence[0].unknown_names,
    )
    if best.entities:  # the best support any entity-matched candidate had
        ent_cos = max((e.cosine for e in evidence if e.entities and e.cosine is not None), default=None)
        text = weak_reason(Evidence(best.cosine, best.lexical, unknown_names=best.unknown_names), floors).rsplit(";", 1)[0]
        return None, f"{text}; {_entity_text(Evidence(ent_cos, None, best.entities, best.rest_lexical), floors)}"
    return None, weak_reason(best, floors)


# -- near-duplicate collapse --------------------------------------------------------------------


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


# -- token budget --------------------------------------------------------------------------------

def fit_budget(costs: Iterable[int], budget: int, limit: int, count: int | None = None) -> list[tuple[str, int]]:
    """Decide, in rank order, which items fit: ``(decision, tokens used after it)`` per item.

    Decisions: ``"keep"``; ``"truncate"`` (only the first item, when it alone exceeds the budget:
    it is cut to the budget rather than returning nothing); ``"over_budget"`` (skipped, later
    smaller items may still fit); ``"over_limit"`` (the result count is already ``limit``).
    ``costs`` may be a lazy iterable of ``count`` items: no cost is read once ``limit`` items are
    kept (the rest are over the limit whatever they cost).
    """
    if count is None:
        costs = list(costs)
        count = len(costs)
    out: list[tuple[str, int]] = []
    used = 0
    kept = 0
    items = iter(costs)
    while kept < limit and len(out) < count:
        cost = next(items)
        if used + cost <= budget:
            used += cost
            kept += 1
            out.append(("keep", used))
        elif kept == 0:
            used = budget
            kept += 1
            out.append(("truncate", used))
        else:
            out.append(("over_budget", used))
    out.extend([("over_limit", used)] * (count - len(out)))
    return out
