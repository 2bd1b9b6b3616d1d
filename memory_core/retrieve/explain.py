"""Explanations: one per returned record and one for the response (including why it is empty)."""

from __future__ import annotations

from .search_types import Candidate, ResponseExplanation, ResultExplanation
from .pipeline import SearchContext


def explain_result(ctx: SearchContext, cand: Candidate, rank: int) -> ResultExplanation:
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
        collapse = f"kept; no other result within cosine {ctx.settings.collapse_threshold}"
    rerank = None
    if cand.rerank and "score" in cand.rerank:
        rerank = {k: v for k, v in cand.rerank.items() if k in ("score", "rank_before", "rank_after", "moved")}
    links = [{"entity_id": link["entity_id"], "name": link["name"], "kind": link["kind"], "role": link["role"]}
             for link in (record.entity_links if record else [])]
    return ResultExplanation(
        record_id=cand.record_id, rank=rank, raw_query=ctx.request.query, rewritten_query=ctx.rewritten_query,
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


def _summary(ctx: SearchContext, returned: int) -> str:
    if ctx.empty_reason:
        return f"nothing returned: {ctx.empty_reason}"
    counts = {g: len(ctx.generated.get(g, [])) for g in ("dense", "lexical", "entity")}
    return (
        f"{returned} result(s) from {len(ctx.pool)} candidates "
        f"(dense {counts['dense']}, lexical {counts['lexical']}, entity {counts['entity']}); "
        f"gate: {ctx.gate_summary.get('decision', 'not run')}; "
        f"{sum(len(c.duplicates) for c in ctx.results)} near-duplicates collapsed, "
        f"{ctx.budget_used} of {ctx.settings.token_budget} tokens used"
    )


def explain_response(ctx: SearchContext) -> ResponseExplanation:
    s = ctx.settings
    dropped_by_budget = [c for c in ctx.dropped if c.dropped_at == "budget"]
    return ResponseExplanation(
        raw_query=ctx.request.query, rewritten_query=ctx.rewritten_query, rewrite_status=ctx.rewrite_status,
        scopes=dict(ctx.access.readable) if ctx.access else {},
        filter=ctx.filter.to_dict() if ctx.filter is not None else {},
        candidates={**{g: len(ctx.generated.get(g, [])) for g in ("dense", "lexical", "entity")}, "fused": len(ctx.pool)},
        gate=dict(ctx.gate_summary),
        collapsed=sum(1 for c in ctx.dropped if c.dropped_at == "collapse"),
        rerank=dict(ctx.rerank_outcome),
        budget={"budget": s.token_budget, "used": ctx.budget_used, "limit": ctx.request.limit,
                "dropped": [{"id": c.record_id, "reason": c.dropped_reason} for c in dropped_by_budget]},
        returned=len(ctx.results), empty_reason=ctx.empty_reason, summary=_summary(ctx, len(ctx.results)),
        dense_index=next((dict(st.outputs["index"]) for st in ctx.stages if st.name == "dense" and "index" in st.outputs), None),
    )


class ExplainStage:
    """Build the per-result and response explanations (runs even when the search ended empty)."""

    name = "explain"
    always = True

    def run(self, ctx: SearchContext) -> SearchContext:
        if ctx.halted:
            ctx.results = []
        ctx.explanations = [explain_result(ctx, cand, rank) for rank, cand in enumerate(ctx.results, start=1)]
        ctx.response_explanation = explain_response(ctx)
        ctx.io(outputs={"results": len(ctx.explanations), "empty_reason": ctx.empty_reason})
        return ctx
