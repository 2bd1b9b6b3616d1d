"""The token budget: results kept in order while they fit ``token_budget`` and the limit (tokens
counted by the offline estimate, ``text.count_tokens``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..policy.grants import ScopeAccess
from ..settings import RetrievalSettings
from ..store.search_queries import result_records, results_from
from ..text import count_tokens, truncate_to_tokens
from .recorder import StageRecorder
from .request import SearchRequest
from .search_types import Candidate
from .services import SearchServices


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


class BudgetStage:
    """Keep results in order while they fit the token budget and the result limit."""

    name = "budget"

    @dataclass(slots=True)
    class Inputs:
        settings: RetrievalSettings
        request: SearchRequest
        access: ScopeAccess
        ranking: list[Candidate]
        window_records: dict | None = None  # the collapse window's records, when collapse read them

    @dataclass(slots=True)
    class Outputs:
        ranking: list[Candidate]
        results: list[Candidate]  # what is returned, each with its full record
        budget_used: int

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        s = given.settings
        budget, limit, overhead = s.token_budget, given.request.limit, s.token_overhead_per_result
        costs: list[int] = []  # counted lazily: candidates past the limit need no token count

        def counted():
            for cand in given.ranking:
                costs.append(count_tokens(cand.content or "") + overhead)
                yield costs[-1]

        decisions = fit_budget(counted(), budget, limit, len(given.ranking))
        kept: list[Candidate] = []
        for i, (cand, (decision, used)) in enumerate(zip(given.ranking, decisions)):
            cost = costs[i] if i < len(costs) else None
            if decision == "keep":
                cand.tokens = cost
                cand.budget = f"fits: {used} of {budget} tokens used after it"
                kept.append(cand)
            elif decision == "truncate":
                cand.content = truncate_to_tokens(cand.content or "", max(budget - overhead, 1))
                cand.tokens = count_tokens(cand.content) + overhead
                cand.truncated = True
                cand.budget = f"truncated: alone it needs {cost} tokens, more than the budget of {budget}"
                kept.append(cand)
            elif decision == "over_budget":
                rec.drop(cand, f"token budget: {used} + {cost} > {budget}")
            else:
                rec.drop(cand, f"beyond the result limit of {limit}")
        # the full envelope (with entity links) only for what is returned, never naming an entity
        # the principal cannot read
        seqs = [c.seq for c in kept]
        if given.window_records is not None and all(seq in given.window_records for seq in seqs):
            records = results_from(given.window_records, seqs, given.access.readable_keys)
        else:
            records = result_records(deps.store, seqs, given.access.readable_keys)
        for cand in kept:
            cand.record = records.get(cand.seq)
        used = sum(c.tokens or 0 for c in kept)
        rec.io(inputs={"candidates": len(decisions), "budget": budget, "limit": limit, "overhead_per_result": overhead},
               outputs={"kept": [{"id": c.record_id, "tokens": c.tokens} for c in kept], "used": used})
        return self.Outputs(kept, list(kept), used)
