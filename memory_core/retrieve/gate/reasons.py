"""The gate's decisions in words: why a candidate is strong or weak, and why a set was refused.

Kept apart from the decision (:mod:`.rules`): these only describe what the rules decided, for the
explanations, the trace and the empty reason. Numbers are shown so that a comparison never reads
like "0.40 < floor 0.40".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from . import model
from .rules import Evidence, GateFloors, NameRest, model_probability, short_list_cosine_floor


def _fmt(value: float, floor: float, digits: int) -> tuple[str, str]:
    """Format value and floor so that a comparison shown never reads like '0.40 < floor 0.40'."""
    while digits < 6:
        a, b = f"{value:.{digits}f}", f"{floor:.{digits}f}"
        if a != b or value == floor:
            return a, b
        digits += 1
    return f"{value:.6f}", f"{floor:.6f}"


def _cosine_floor(ev: Evidence, floors: GateFloors) -> tuple[float, str]:
    """The cosine floor that applies, and how to name it in a reason."""
    if ev.unknown_names:
        names = ", ".join(ev.unknown_names)
        return floors.cosine_unknown_name, f"floor {{}} for a query naming {names}, which no readable record holds"
    return floors.cosine, "floor {}"


def candidate_reason(ev: Evidence, floors: GateFloors) -> str:
    """Why this candidate is strong (the first signal that clears its floor), or why it is weak."""
    floor, label = _cosine_floor(ev, floors)
    if ev.cosine is not None and ev.cosine >= floor:
        a, b = _fmt(ev.cosine, floor, 2)
        return f"cosine {a} >= {label.format(b)}"
    if ev.lexical is not None and ev.lexical >= floors.lexical:
        a, b = _fmt(ev.lexical, floors.lexical, 2)
        return f"lexical score {a} >= floor {b}"
    if ev.entities:
        names = ", ".join(ev.entities)
        if ev.cosine is not None and ev.cosine >= floors.entity_support_cosine:
            a, b = _fmt(ev.cosine, floors.entity_support_cosine, 2)
            return f"entity match ({names}) supported by cosine {a} >= {b}"
        if ev.rest_lexical is not None and ev.rest_lexical >= floors.entity_support_lexical:
            a, b = _fmt(ev.rest_lexical, floors.entity_support_lexical, 2)
            return f"entity match ({names}) supported by the rest of the question: lexical {a} >= {b}"
    return weak_reason(ev, floors, prefix="")


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


def set_weak_reason(evidence: Sequence[Evidence], floors: GateFloors) -> str:
    """Why no candidate of the set is strong, judged on the best value of each signal."""
    if not evidence:
        return "no candidates"
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
        return f"{text}; {_entity_text(Evidence(ent_cos, None, best.entities, best.rest_lexical), floors)}"
    return weak_reason(best, floors)


def rest_refusal(rest: NameRest, floors: GateFloors) -> str:
    """Why the rest of a question naming a known entity found too little support (only for a
    ``rest`` that :func:`.rules.rest_supported` refused)."""
    names = ", ".join(n.casefold() for n in rest.names)
    if rest.short:
        return _short_list_refusal(rest, floors, names)
    if floors.name_model_floor > -1.0:
        p, values = model_probability(rest, floors)
        a, b = _fmt(p, floors.name_model_floor, 2)
        return (f"mentions {names}, but the rest of the question finds too little support (known-name model: "
                f"p {a} < {b} from {model.describe(values)})")
    parts = []
    if rest.cosine is not None:
        a, b = _fmt(rest.cosine, floors.name_rest_cosine, 2)
        parts.append(f"best cosine without the name {a} < {b}")
    if rest.lexical is None:
        parts.append("no record holds another word of the question")
    elif math.isfinite(floors.name_rest_lexical):
        a, b = _fmt(rest.lexical, floors.name_rest_lexical, 2)
        parts.append(f"best lexical score on the other words {a} < {b}")
    return f"mentions {names}, but nothing about the rest of the question ({'; '.join(parts)})"


def _short_list_refusal(rest: NameRest, floors: GateFloors, names: str) -> str:
    cosine_floor = short_list_cosine_floor(rest, floors)
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
    return f"mentions {names}, but nothing about the rest of the question ({'; '.join(parts)})"


def result_floor_reason(cosine: float | None, lexical: float | None, floor: float) -> str:
    """Why a candidate of a result set that passed is still dropped (weak on everything)."""
    cos = "no cosine" if cosine is None else f"cosine {cosine:.2f}"
    lex = "no lexical match" if lexical is None else f"lexical score {lexical:.2f}"
    return f"weak on every signal in a result set that passed ({cos}, {lex}; result floor {floor:g})"
