"""Stages between candidate generation and the final list: fusion, freshness, the gate, near-
duplicate collapse and the token budget. The arithmetic lives in :mod:`.scoring`."""

from __future__ import annotations


from ..clock import parse_ts
from ..store.records import fetch_records
from .filters import index_mask
from .generators import _META, _candidate, dense_candidates, entity_candidates
from .search_types import Candidate
from .pipeline import SearchContext
from .scoring import (
    collapse_near_duplicates,
    count_tokens,
    fit_budget,
    freshness_factor,
    gate_check,
    rrf_fuse,
    truncate_to_tokens,
    weak_signals_reason,
)


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


class FusionStage:
    """Reciprocal-rank fusion of the dense, lexical and entity lists."""

    name = "fusion"

    def run(self, ctx: SearchContext) -> SearchContext:
        lists = {name: ctx.generated.get(name, []) for name in ("dense", "lexical", "entity")}
        fused = rrf_fuse(lists, ctx.settings.rrf_k)
        ctx.ranking = []
        for rank, (seq, score) in enumerate(fused, start=1):
            cand = ctx.pool[seq]
            cand.fused_rank, cand.fused_score, cand.score = rank, score, score
            ctx.ranking.append(cand)
        ctx.io(inputs={name: len(ids) for name, ids in lists.items()} | {"rrf_k": ctx.settings.rrf_k},
               outputs={"fused": [c.brief() for c in ctx.ranking]})
        return ctx


class FreshnessStage:
    """Episodic records lose part of their fused score with age (event time, else creation time)."""

    name = "freshness"

    def run(self, ctx: SearchContext) -> SearchContext:
        s = ctx.settings
        ctx.io(inputs={"half_life_days": s.freshness_half_life_days, "weight": s.freshness_weight})
        if s.freshness_weight == 0:
            ctx.skip("freshness_weight is 0")
            return ctx
        adjusted = []
        for cand in ctx.ranking:
            if cand.type != "episodic":
                continue
            when = parse_ts(cand.event_at or cand.created_at)
            age = (ctx.now - when).total_seconds() / 86400.0
            factor = freshness_factor(age, s.freshness_half_life_days, s.freshness_weight)
            before = cand.score
            cand.score = before * factor
            cand.freshness = {"age_days": round(age, 3), "factor": round(factor, 6), "score_before": round(before, 8),
                              "score_after": round(cand.score, 8)}
            adjusted.append({"id": cand.record_id, **cand.freshness})
        ctx.ranking.sort(key=lambda c: (-c.score, c.fused_rank))
        ctx.io(outputs={"adjusted": adjusted, "order": [c.record_id for c in ctx.ranking]})
        return ctx


class GateStage:
    """Drop candidates weak on every signal; an empty pool ends the search with the exact reason."""

    name = "gate"

    def run(self, ctx: SearchContext) -> SearchContext:
        s = ctx.settings
        missing = [c.seq for c in ctx.ranking if c.cosine is None]
        if missing and ctx.query_vec is not None:
            sims = ctx.deps.index.similarity(ctx.query_vec, missing)
            for cand in ctx.ranking:
                if cand.cosine is None and cand.seq in sims:
                    cand.cosine = sims[cand.seq]
        rerank_on = ctx.settings.reranker_enabled if ctx.request.rerank is None else ctx.request.rerank
        ctx.floors_deferred = bool(rerank_on and s.reranker_mode == "replace_floors")
        cosines = [c.cosine for c in ctx.ranking if c.cosine is not None]
        bm25s = [c.bm25 for c in ctx.ranking if c.bm25 is not None]
        summary = {
            "cosine_floor": s.cosine_floor, "bm25_floor": s.bm25_floor,
            "best_cosine": max(cosines) if cosines else None, "best_bm25": max(bm25s) if bm25s else None,
            "entity_matches": sum(1 for c in ctx.ranking if c.entity_rank is not None),
            "candidates": len(ctx.ranking), "floors": "deferred to the reranker" if ctx.floors_deferred else "applied",
        }
        ctx.io(inputs={"candidates": len(ctx.ranking)} | {k: summary[k] for k in ("cosine_floor", "bm25_floor", "floors")})
        kept: list[Candidate] = []
        for cand in ctx.ranking:
            passed, reason = gate_check(cand.cosine, cand.bm25, [e["name"] for e in cand.entities], s.cosine_floor, s.bm25_floor)
            if ctx.floors_deferred:
                cand.gate = f"deferred to the reranker (floors: {reason})"
                cand.rerank = {"floor_passed": passed, "floor_reason": reason}
                kept.append(cand)
            elif passed:
                cand.gate = reason
                kept.append(cand)
            else:
                ctx.drop(cand, f"gate: {reason}")
        ctx.ranking = kept
        summary["passed"] = len(kept)
        summary["dropped"] = summary["candidates"] - len(kept)
        ctx.gate_summary = summary
        if not kept:
            reason = self._empty_reason(ctx, summary)
            summary["empty_reason"] = reason
            ctx.halt(reason)
        ctx.io(outputs={"passed": [{"id": c.record_id, "cosine": _r(c.cosine), "bm25": _r(c.bm25),
                                    "entity": c.entity_rank is not None, "gate": c.gate} for c in kept],
                        **{k: summary[k] for k in ("best_cosine", "best_bm25", "entity_matches")}})
        return ctx

    def _empty_reason(self, ctx: SearchContext, summary: dict) -> str:
        s = ctx.settings
        if summary["candidates"] == 0:
            reason = f"no record in the readable scopes passes the hard filter ({ctx.filter.describe()})"
        else:
            reason = weak_signals_reason(summary["best_cosine"], summary["best_bm25"], s.cosine_floor, s.bm25_floor)
        if not ctx.request.historical:
            probe = lifecycle_probe(ctx)
            summary["lifecycle_probe"] = probe
            if probe["passing"]:
                kinds = [k for k in ("superseded", "expired") if probe[k]]
                detail = ", ".join(f"{probe[k]} {k}" for k in kinds)
                reason = f"all {probe['passing']} candidates filtered as {' or '.join(kinds)} ({detail}); historical search includes them"
        return reason


def lifecycle_probe(ctx: SearchContext) -> dict:
    """On an empty answer: would superseded or expired records in the readable scopes have passed?

    Reruns the generators with the historical statuses and counts the records they find that pass
    the floors (or match an entity) but were excluded by lifecycle alone.
    """
    s = ctx.settings
    deps = ctx.deps
    flt = ctx.filter.with_statuses(("provisional", "confirmed", "superseded", "expired"), include_lapsed=True)
    found: dict[int, Candidate] = {}
    if ctx.query_vec is not None:
        # Only rows the wider filter adds (superseded, expired, lapsed): usually few, so this is a
        # small gathered product, not a second scan of the whole matrix.
        mask = index_mask(deps.index, flt, [])
        if ctx.mask is not None and ctx.mask.shape == mask.shape:
            mask &= ~ctx.mask
        for cand in dense_candidates(deps.store, deps.index, flt, mask, ctx.query_vec, s.candidates_per_generator)[0]:
            found[cand.seq] = cand
    # Lexical: FTS5 is not asked again. The lexical stage kept its FTS-only ranking (the best
    # 4 x k matches before any filter); the historical records among them are read here.
    if ctx.lexical_seen:
        for cand in historical_rows(deps.store, flt, ctx.lexical_seen):
            found.setdefault(cand.seq, cand).bm25 = ctx.lexical_seen[cand.seq]
    for cand in entity_candidates(deps.store, flt, ctx.entities, s.candidates_per_generator):
        found.setdefault(cand.seq, cand).entities = cand.entities
    if ctx.query_vec is not None:
        sims = deps.index.similarity(ctx.query_vec, [seq for seq, c in found.items() if c.cosine is None])
        for seq, value in sims.items():
            found[seq].cosine = value
    counts = {"superseded": 0, "expired": 0, "passing": 0, "ids": []}
    for cand in found.values():
        lapsed = cand.status == "provisional" and cand.seq not in ctx.pool
        kind = "expired" if (cand.status == "expired" or lapsed) else cand.status
        if kind not in ("superseded", "expired"):
            continue
        passed, _ = gate_check(cand.cosine, cand.bm25, [e["name"] for e in cand.entities], s.cosine_floor, s.bm25_floor)
        if passed:
            counts[kind] += 1
            counts["passing"] += 1
            counts["ids"].append(cand.record_id)
    return counts


def historical_rows(store, flt, seqs) -> list[Candidate]:
    """Records among ``seqs`` that pass ``flt`` (the probe's wider filter), as candidates."""
    where, params = flt.sql("r")
    seqs = list(seqs)
    with store.lock:
        rows = store.conn.execute(
            f"SELECT {_META} FROM records r WHERE r.seq IN ({','.join('?' * len(seqs))}) AND {where}", [*seqs, *params]
        ).fetchall()
    return [_candidate(row) for row in rows]


def collapse_window(limit: int) -> int:
    """How many of the best gate survivors are loaded and examined: three times the limit (at
    least ten more than it), ample for collapse and budget skips to still fill the limit."""
    return max(3 * limit, limit + 10)


class CollapseStage:
    """Fetch the surviving records and fold near-duplicates into the better-ranked copy."""

    name = "collapse"

    def run(self, ctx: SearchContext) -> SearchContext:
        threshold = ctx.settings.collapse_threshold
        window = collapse_window(ctx.request.limit)
        for cand in ctx.ranking[window:]:
            ctx.drop(cand, f"outside the collapse window of {window}")
        ctx.ranking = ctx.ranking[:window]
        seqs = [c.seq for c in ctx.ranking]
        store = ctx.deps.store
        with store.lock:
            rows = {row[0]: row for row in store.conn.execute(
                f"SELECT seq, status, content FROM records WHERE seq IN ({','.join('?' * len(seqs))})", seqs)}
        present: list[Candidate] = []
        for cand in ctx.ranking:
            row = rows.get(cand.seq)
            if row is None or row["status"] == "deleted":
                ctx.drop(cand, "record was deleted while the search ran")
                continue
            cand.content = row["content"]
            present.append(cand)
        # The vectors come from the in-memory index (already refreshed for this search), not from
        # the store's blobs: reading and decoding 30 blobs was most of this stage's time.
        vectors = ctx.deps.index.vectors([c.seq for c in present])
        kept_ids, absorbed = collapse_near_duplicates([c.record_id for c in present], vectors, threshold)
        by_id = {c.record_id: c for c in present}
        for cand in present:
            if cand.record_id in absorbed:
                keeper, cosine = absorbed[cand.record_id]
                by_id[keeper].duplicates.append({"id": cand.record_id, "cosine": round(cosine, 6)})
                ctx.drop(cand, f"near-duplicate of {keeper} (cosine {cosine:.3f} >= {threshold})")
        ctx.ranking = [by_id[i] for i in kept_ids]
        ctx.io(inputs={"candidates": len(seqs), "threshold": threshold, "window": window},
               outputs={"kept": [c.record_id for c in ctx.ranking], "collapsed": len(absorbed)})
        return ctx


class BudgetStage:
    """Keep results in order while they fit the token budget and the result limit."""

    name = "budget"

    def run(self, ctx: SearchContext) -> SearchContext:
        s = ctx.settings
        budget, limit, overhead = s.token_budget, ctx.request.limit, s.token_overhead_per_result
        costs = [count_tokens(c.content or "") + overhead for c in ctx.ranking]
        decisions = fit_budget(costs, budget, limit)
        kept: list[Candidate] = []
        for cand, cost, (decision, used) in zip(ctx.ranking, costs, decisions):
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
                ctx.drop(cand, f"token budget: {used} + {cost} > {budget}")
            else:
                ctx.drop(cand, f"beyond the result limit of {limit}")
        if kept:  # the full envelope (with entity links) only for what is returned
            store = ctx.deps.store
            with store.lock:
                records = {r.seq: r for r in fetch_records(store.conn, f"r.seq IN ({','.join('?' * len(kept))})", [c.seq for c in kept])}
            for cand in kept:
                cand.record = records.get(cand.seq)
        ctx.ranking = kept
        ctx.results = list(kept)
        ctx.budget_used = sum(c.tokens or 0 for c in kept)
        ctx.io(inputs={"candidates": len(costs), "budget": budget, "limit": limit, "overhead_per_result": overhead},
               outputs={"kept": [{"id": c.record_id, "tokens": c.tokens} for c in kept], "used": ctx.budget_used})
        return ctx
