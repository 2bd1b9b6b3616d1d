"""Explanations: one per returned record and one for the response (including why it is empty)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..policy.grants import ScopeAccess
from ..settings import RetrievalSettings
from ..store.as_of_queries import statuses_at
from ..store.records import LIVE_STATUSES
from .filters import HardFilter, describe_as_of
from .generate.candidates import GENERATORS
from .recorder import StageRecorder
from .request import SearchRequest
from .search_types import Candidate, ResponseExplanation, ResultExplanation, StageTrace
from .services import SearchServices
from .window import FilterOutcome


def explain_result(settings: RetrievalSettings, request: SearchRequest, rewritten_query: str | None, cand: Candidate,
                   rank: int) -> ResultExplanation:
    """Everything that put ``cand`` at ``rank``: signals, ranks, adjustments and each decision."""
    record = cand.record
    generators: dict[str, dict] = {}
    if cand.dense_rank is not None:
        generators["dense"] = {"rank": cand.dense_rank, "cosine": round(cand.cosine, 6)}
    if cand.lexical_rank is not None:
        generators["lexical"] = {"rank": cand.lexical_rank, "lexical": round(cand.lexical, 6), "terms": list(cand.lexical_terms)}
    if cand.entity_rank is not None:
        generators["entity"] = {"rank": cand.entity_rank, "entities": cand.entities}
    if cand.rest_rank is not None:  # the fusion's fourth list: the question without its known names
        generators["name_stripped"] = {"rank": cand.rest_rank, "cosine": cand.rest_cosine}
    if cand.duplicates:
        collapse = "kept; absorbed near-duplicates " + ", ".join(f"{d['id']} (cosine {d['cosine']:.3f})" for d in cand.duplicates)
    else:
        collapse = f"kept; no other result within cosine {settings.collapse_threshold}"
    rerank = None
    if cand.rerank and "score" in cand.rerank:
        rerank = {k: v for k, v in cand.rerank.items() if k in ("score", "rank_before", "rank_after", "moved")}
    links = [{"entity_id": link["entity_id"], "name": link["name"], "kind": link["kind"], "role": link["role"]}
             for link in (record.entity_links if record else [])]
    return ResultExplanation(
        record_id=cand.record_id, rank=rank, raw_query=request.query, rewritten_query=rewritten_query,
        matched_by=cand.generators, generators=generators,
        cosine=round(cand.cosine, 6) if cand.cosine is not None else None,
        fused_rank=cand.fused_rank, fused_score=round(cand.fused_score, 8) if cand.fused_score is not None else None,
        freshness=cand.freshness, rerank=rerank,
        source_kind=record.source_kind if record else None, status=cand.status, scope=cand.scope, type=cand.type,
        created_at=cand.created_at, event_at=cand.event_at,
        valid_from=record.valid_from if record else None, valid_until=record.valid_until if record else None,
        expires_at=record.expires_at if record else None, entity_links=links,
        gate=cand.gate, collapse=collapse, budget=cand.budget, tokens=cand.tokens, truncated=cand.truncated,
    )


class ExplainStage:
    """Build the per-result and response explanations (runs even when the search ended empty)."""

    name = "explain"
    always = True

    @dataclass(slots=True)
    class Inputs:
        request: SearchRequest
        settings: RetrievalSettings
        trace: list[StageTrace]
        rewritten_query: str | None
        rewrite_status: str
        access: ScopeAccess
        filter: HardFilter | None = None
        filter_outcome: FilterOutcome | None = None
        pool: dict[int, Candidate] = field(default_factory=dict)
        generated: dict[str, list[int]] = field(default_factory=dict)
        gate: dict = field(default_factory=dict)
        rerank_outcome: dict = field(default_factory=lambda: {"status": "disabled"})
        results: list[Candidate] = field(default_factory=list)
        budget_used: int = 0
        empty_reason: str | None = None

    @dataclass(slots=True)
    class Outputs:
        results: list[Candidate]
        explanations: list[ResultExplanation]
        response_explanation: ResponseExplanation

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        results = [] if given.empty_reason is not None else given.results
        if given.filter is not None and given.filter.as_of_mode == "memory" and results:
            as_they_were(deps, results, given.filter.as_of)
        explanations = [explain_result(given.settings, given.request, given.rewritten_query, cand, rank)
                        for rank, cand in enumerate(results, start=1)]
        response = explain_response(given, results)
        rec.io(outputs={"results": len(explanations), "empty_reason": given.empty_reason})
        return self.Outputs(results, explanations, response)


def as_they_were(deps: SearchServices, results: list[Candidate], at: str) -> None:
    """Show each result of a memory-mode as-of search with the status it had at ``at`` (a version
    superseded since was live then; a record confirmed since may have been provisional)."""
    then = statuses_at(deps.store, [c.record_id for c in results], at)
    for cand in results:
        status = then.get(cand.record_id)
        if status is None and cand.status not in LIVE_STATUSES:
            status = "confirmed"  # no creation event to read (an old store): it was live then, and the log has no promotion
        if status is not None and status != cand.status:
            cand.status = status
            if cand.record is not None:
                cand.record = replace(cand.record, status=status)


def _stage(trace: list[StageTrace], name: str) -> StageTrace | None:
    return next((st for st in trace if st.name == name), None)


def _summary(given: ExplainStage.Inputs, results: list[Candidate]) -> str:
    if given.empty_reason:
        return f"nothing returned: {given.empty_reason}"
    flt = given.filter
    when = f"{describe_as_of(flt.as_of, flt.as_of_mode)}; " if flt is not None and flt.as_of else ""
    counts = {g: len(given.generated.get(g, [])) for g in GENERATORS}
    return when + (
        f"{len(results)} result(s) from {len(given.pool)} candidates "
        f"(dense {counts['dense']}, lexical {counts['lexical']}, entity {counts['entity']}); "
        f"gate: {given.gate.get('decision', 'not run')}; "
        f"{sum(len(c.duplicates) for c in results)} near-duplicates collapsed, "
        f"{given.budget_used} of {given.settings.token_budget} tokens used"
    )


def explain_response(given: ExplainStage.Inputs, results: list[Candidate]) -> ResponseExplanation:
    """Why the response holds what it holds (or nothing), from the hand-offs and the stage traces."""
    s = given.settings
    budget, collapse, dense = _stage(given.trace, "budget"), _stage(given.trace, "collapse"), _stage(given.trace, "dense")
    return ResponseExplanation(
        raw_query=given.request.query, rewritten_query=given.rewritten_query, rewrite_status=given.rewrite_status,
        scopes=dict(given.access.readable),
        filter={**(given.filter.to_dict() if given.filter is not None else {}),
                **(given.filter_outcome.to_dict() if given.filter_outcome is not None else {})},
        candidates={**{g: len(given.generated.get(g, [])) for g in GENERATORS}, "fused": len(given.pool)},
        gate=dict(given.gate),
        collapsed=len(collapse.dropped) if collapse is not None else 0,
        rerank=dict(given.rerank_outcome),
        budget={"budget": s.token_budget, "used": given.budget_used, "limit": given.request.limit,
                "dropped": [dict(d) for d in budget.dropped] if budget is not None else []},
        returned=len(results), empty_reason=given.empty_reason, summary=_summary(given, results),
        dense_index=dict(dense.outputs["index"]) if dense is not None and "index" in dense.outputs else None,
    )
