"""The gate stage: gathers each candidate's evidence, asks the rules (:mod:`.decision`), records
the decision with the tracer (:mod:`.trace`) and applies it. On an empty answer it runs the
lifecycle probe (:mod:`.probe`) with the historical search it was built with."""

from __future__ import annotations

from ..generate.candidates import COSINE_DIGITS
from ..generate.name_stripped import full_entity_names
from ..recorder import StageRecorder
from ..search_types import Candidate
from ..services import SearchServices
from . import trace
from .decision import judge
from .handoffs import GateInputs, GateOutputs
from .names import evidence_of, name_rest, name_terms, short_list_names, unknown_names
from .probe import HistoricalSearch, empty_reason
from .reasons import candidate_reason, result_floor_reason
from .rules import GateFloors, SetSignals, below_result_floor, set_strong


def fill_cosines(deps: SearchServices, query_vector, ranking: list[Candidate]) -> None:
    """The query cosine of every lexical- or entity-only candidate, from the index."""
    missing = [c.seq for c in ranking if c.cosine is None]
    if missing and query_vector is not None:
        sims = deps.index.similarity(query_vector, missing)
        for cand in ranking:
            if cand.cosine is None and cand.seq in sims:
                cand.cosine = round(float(sims[cand.seq]), COSINE_DIGITS)


class GateStage:
    """The empty-result gate, judged on the result set: nothing is returned when every candidate is
    weak on every signal (or only a known name links them to the question); otherwise the fused
    order goes on untouched, less the candidates weak on everything.

    ``historical`` is the generators' historical re-run (``generate.historical.historical_candidates``,
    wired by ``default_stages``): on an empty answer the lifecycle probe asks it whether superseded
    or expired records alone would have answered. Without it the probe is not run and the empty
    reason is the gate's own."""

    name = "gate"
    Inputs = GateInputs
    Outputs = GateOutputs

    def __init__(self, historical: HistoricalSearch | None = None) -> None:
        self.historical = historical

    def run(self, given: GateInputs, rec: StageRecorder, deps: SearchServices) -> GateOutputs:
        s, ranking, request = given.settings, given.ranking, given.request
        floors = GateFloors.of(s)
        unknown = tuple(unknown_names(given.query, given.lexical))
        fill_cosines(deps, given.query_vector, ranking)
        rerank_on = s.reranker_enabled if request.rerank is None else request.rerank
        deferred = bool(rerank_on and s.reranker_mode == "replace_floors")
        in_query = name_terms(given.entities)
        evidence = [evidence_of(given.lexical, c, in_query, unknown) for c in ranking]
        signals = SetSignals.of(evidence)
        summary = trace.floors_summary(s, ranking, unknown, signals, deferred)
        rec.io(inputs={"candidates": len(ranking)} | {k: summary[k] for k in trace.TRACED_INPUTS})
        # The known-name check, for names that link too many records to point at any one (the
        # fusion's test), or (the short-list rule) few: a name is not relevance either way.
        rest, rest_q, cover = None, given.rest_query, None
        every_signal = s.cosine_floor <= -1.0  # the gate open (a calibration pass): log every signal
        strong = set_strong(signals, floors)
        names = full_entity_names(s, given.query, given.entities, given.generated.get("entity", [])) if ranking else []
        if names and (every_signal or (strong and floors.name_rule_on)):
            rest, rest_q, cover = name_rest(deps, given, names, in_query, floors, every_signal, rest_q)
        elif strong and not every_signal and (short := short_list_names(given)):
            names = short
            rest, rest_q, cover = name_rest(deps, given, short, in_query, floors, False, rest_q, short=True)
        decision = judge(evidence, signals, floors, rest)
        trace.decision_summary(summary, ranking, decision, names, rest, floors)
        rec.io(outputs=trace.trace_outputs(summary, ranking, evidence, decision, rest_q.cosines if rest_q else {}, cover))
        if deferred:  # the reranker decides; each candidate carries the gate's verdict for a fallback
            for cand, ev, passed in zip(ranking, evidence, decision.strong):
                cand.gate = trace.candidate_gate_text(summary, passed, candidate_reason(ev, floors), True)
                cand.rerank = {"floor_passed": decision.passed, "floor_reason": summary["decision"]}
            return GateOutputs(ranking, summary, True)
        if not decision.passed:
            for cand in ranking:
                rec.drop(cand, f"gate: {decision.reason}")
            summary["empty_reason"] = empty = empty_reason(deps, given, self.historical, floors, decision.reason, unknown,
                                                           in_query, summary, rest_q)
            return GateOutputs([], summary, False, empty)
        kept = []
        for cand, ev, passed in zip(ranking, evidence, decision.strong):
            if passed or not below_result_floor(cand.cosine, cand.lexical, s.result_floor):
                cand.gate = trace.candidate_gate_text(summary, passed, candidate_reason(ev, floors), False)
                kept.append(cand)
            else:
                rec.drop(cand, f"gate: {result_floor_reason(cand.cosine, cand.lexical, s.result_floor)}")
        summary["below_result_floor"] = len(ranking) - len(kept)
        return GateOutputs(kept, summary, False)
