"""The gate's tracer: what the trace, the response explanation and the search log say about a
gate decision. It sits beside the decision (:mod:`.decision`) and only reads it, so the rules stay
small functions and the ~30 summary keys the log and the calibrator read are written in one place.
"""

from __future__ import annotations

from ...settings import RetrievalSettings
from ..search_types import Candidate
from . import model
from .decision import GateDecision
from .rest_cover import RestCover
from .rules import Evidence, GateFloors, NameRest, SetSignals

# The summary keys the gate stage's trace outputs repeat (the calibrator and the LoCoMo harness read them).
TRACED = ("passed", "unknown_names", "best_cosine", "best_lexical", "entity_matches", "best_entity_cosine",
          "best_entity_rest_lexical", "strong", "known_names", "best_rest_cosine", "best_rest_lexical", "best_rest_both",
          "unheld_names", "names_linked_together_by", "known_names_short", "best_rest_cover", "best_rest_cover_joint", "rest_held")
TRACED_INPUTS = ("cosine_floor", "lexical_floor", "entity_support_cosine", "entity_support_lexical", "floors")


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def floors_summary(s: RetrievalSettings, ranking: list[Candidate], unknown: tuple[str, ...], signals: SetSignals,
                   deferred: bool) -> dict:
    """The summary's first part: the floors in force and the set's best signals."""
    return {
        "cosine_floor": s.cosine_floor, "lexical_floor": s.lexical_floor,
        "entity_support_cosine": s.entity_support_cosine, "entity_support_lexical": s.entity_support_lexical,
        "cosine_floor_unknown_name": s.cosine_floor_unknown_name, "unknown_names": list(unknown),
        "best_cosine": signals.cosine, "best_lexical": signals.lexical,
        "entity_matches": sum(1 for c in ranking if c.entity_rank is not None),
        "candidates": len(ranking), "floors": "deferred to the reranker" if deferred else "applied",
        "best_entity_rest_lexical": signals.entity_rest, "best_entity_cosine": signals.entity_cosine,
    }


def decision_summary(summary: dict, ranking: list[Candidate], decision: GateDecision, names: list[str],
                     rest: NameRest | None, floors: GateFloors) -> dict:
    """The rest of the summary: the known-name check's signals, the model's view, and the decision."""
    summary["strong"] = sum(decision.strong)
    judged = rest is not None and not rest.bare and not rest.joint
    summary["known_names"] = names if judged else []  # the names the rule judged
    summary["known_names_short"] = bool(judged and rest.short)
    summary["names_linked_together_by"] = rest.joint if rest else None
    summary["best_rest_cosine"] = rest.cosine if rest else None
    summary["best_rest_lexical"] = rest.lexical if rest else None
    summary["best_rest_both"] = rest.both if rest else None
    summary["unheld_names"] = list(rest.unheld) if rest else []
    summary["best_rest_cover"], summary["best_rest_cover_joint"], summary["rest_held"] = (
        (rest.cover, rest.cover_joint, rest.held) if rest else (None, None, None))
    if judged and floors.name_model_floor > -1.0 and not rest.short:
        values = rest.model_values()
        summary["name_model"] = {"probability": round(model.probability(floors.name_model_weights, values), 6),
                                 "floor": floors.name_model_floor, "features": dict(zip(model.FEATURES, values))}
    summary["passed"] = decision.passed
    summary["reason"] = decision.reason
    summary["decision"] = (f"passed: the result set passes on {ranking[decision.first].record_id} ({decision.reason})"
                           if decision.passed else f"empty: {decision.reason}")
    return summary


def trace_outputs(summary: dict, ranking: list[Candidate], evidence: list[Evidence], decision: GateDecision,
                  rest_cosines: dict[int, float], cover: RestCover | None) -> dict:
    """The gate stage's trace outputs: the decision, every candidate's signals, and the summary's best values."""
    covers = cover.per_candidate if cover else {}
    return {"decision": summary["decision"], "candidates": [
        {"id": c.record_id, "cosine": _r(c.cosine), "lexical": _r(c.lexical), "entity": bool(ev.entities),
         "rest_lexical": _r(ev.rest_lexical), "rest_cosine": _r(rest_cosines.get(c.seq)), "rest_cover": covers.get(c.seq),
         "strong": strong}
        for c, ev, strong in zip(ranking, evidence, decision.strong)],
        **{k: summary[k] for k in TRACED}, **({"name_model": summary["name_model"]} if "name_model" in summary else {})}


def candidate_gate_text(summary: dict, strong: bool, own_reason: str, deferred: bool) -> str:
    """What one kept candidate's explanation says about the gate: the set's decision and its own verdict."""
    own = f"this record: {own_reason}" if strong else f"this record alone is weak ({own_reason})"
    if deferred:
        return f"deferred to the reranker (gate: {summary['decision']}; {own})"
    return f"{summary['decision']}; {own}"
