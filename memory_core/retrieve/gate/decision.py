"""The gate's verdict on one result set, from its evidence: a pure function of values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .reasons import candidate_reason, rest_refusal, set_weak_reason
from .rules import Evidence, GateFloors, NameRest, SetSignals, candidate_strong, passes


@dataclass(frozen=True)
class GateDecision:
    """Whether the set passes, on which candidate (its index) and why; and each candidate's own verdict."""

    passed: bool
    first: int | None  # the best-ranked strong candidate the set passes on
    reason: str
    strong: tuple[bool, ...]  # per candidate, in rank order


def judge(evidence: Sequence[Evidence], signals: SetSignals, floors: GateFloors, rest: NameRest | None) -> GateDecision:
    """The gate on a result set (``signals`` is ``SetSignals.of(evidence)``): it passes on its first
    strong candidate, unless the rest of a question naming a known entity finds no support."""
    strong = tuple(candidate_strong(ev, floors) for ev in evidence)
    if passes(signals, floors, rest):
        first = strong.index(True)
        return GateDecision(True, first, candidate_reason(evidence[first], floors), strong)
    if True in strong:  # strong candidates, but only the name links them to the question
        matched = candidate_reason(evidence[strong.index(True)], floors)
        return GateDecision(False, None, f"{rest_refusal(rest, floors)}; the name alone matched ({matched})", strong)
    return GateDecision(False, None, set_weak_reason(evidence, floors), strong)
