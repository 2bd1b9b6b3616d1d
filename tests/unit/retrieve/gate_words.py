"""The gate's decision and its wording together, as the tests state them: a candidate's verdict
and reason, a set's first strong candidate and reason, the rest-of-question check and its reason
(memory_core.retrieve.gate keeps the decision and the words apart)."""

from memory_core.retrieve.gate.decision import judge
from memory_core.retrieve.gate.reasons import candidate_reason, rest_refusal
from memory_core.retrieve.gate.rules import SetSignals, candidate_strong, rest_supported


def gate_check(ev, floors):
    return candidate_strong(ev, floors), candidate_reason(ev, floors)


def gate_set(evidence, floors, rest=None):
    decision = judge(evidence, SetSignals.of(evidence), floors, rest)
    return decision.first, decision.reason


def name_rest_check(rest, floors):
    supported = rest_supported(rest, floors)
    return supported, "" if supported else rest_refusal(rest, floors)
