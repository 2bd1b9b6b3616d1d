"""Stages between candidate generation and the final list: fusion, freshness, the gate, near-
duplicate collapse and the token budget. The arithmetic lives in :mod:`.scoring`."""

from __future__ import annotations

import re

import numpy as np

from ..clock import parse_ts
from ..store.records import blob_to_vector, fetch_records, restrict_links
from .filters import index_mask
from .fts_query import query_terms
from . import gate_model
from .generators import COSINE_DIGITS, dense_candidates, entity_candidates, lexical_candidates
from .lexical import partial_score, readable_lookup, unknown_names
from .name_strip import full_entity_names, name_rest, probe_rest_supported, rest_list, short_list_names
from .search_types import Candidate
from .pipeline import SearchContext
from .scoring import (
    collapse_near_duplicates,
    count_tokens,
    fit_budget,
    Evidence,
    GateFloors,
    freshness_factor,
    gate_check,
    gate_set,
    rrf_fuse,
    tied_ranks,
    truncate_to_tokens,
)


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


# "last" asks for the newest ("what did we decide last", "the last time") unless it names a past
# period ("last week", "last summer": LoCoMo's 18 questions with "last" are all of that kind).
_PERIODS = (r"(?:week|weekend|month|year|night|evening|morning|afternoon|summer|winter|spring|autumn|fall|season|quarter|"
            r"semester|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|"
            r"august|september|october|november|december)s?")
RECENCY_WORDS = re.compile(
    r"\b(recent|recently|lately|latest|newest|currently|current|nowadays|these days|right now|now|at the moment|anymore|"
    r"still|today|this (?:week|month|year)|final|finally|in the end|settled? on|land(?:ed)? on|"
    rf"last(?!\s+{_PERIODS}\b))\b", re.IGNORECASE)
# Before issue 31 (kept for the measurement in benchmarks/ranking_sweep.py): without "last", "now",
# "at the moment" and the words that ask for the outcome of a decision (final, in the end, settle on, land on).
PREVIOUS_RECENCY_WORDS = re.compile(
    r"\b(recent|recently|lately|latest|newest|currently|current|nowadays|these days|right now|anymore|still|today|"
    r"this (?:week|month|year))\b", re.IGNORECASE)


def asks_about_recency(query: str) -> bool:
    """Does the query ask about the present, the recent past or the outcome of a decision ("what am I
    currently reading", "what did we decide last about the database")?"""
    return bool(RECENCY_WORDS.search(query))


def fusion_lists(ctx: SearchContext) -> tuple[dict[str, list[int]], str | None]:
    """The generator lists that enter the fusion, and why a list was left out (if one was).

    The entity list is ordered by recency, not relevance. When it is full (the matched entities
    link at least as many readable records as a generator may return, as a speaker or a big
    project does), it is no evidence for any one record, and fusing it would push relevant records
    down; it then stays out of the fusion and counts only at the gate.
    """
    k = ctx.settings.candidates_per_generator
    lists = {name: ctx.generated.get(name, []) for name in ("dense", "lexical", "entity")}
    left_out = None
    if len(lists["entity"]) >= k:
        left_out = f"entity list left out of the fusion: the matched entities link {k} or more readable records"
        lists = {name: ids for name, ids in lists.items() if name != "entity"}
        # The same names lift every cosine of the dense list; the pool ordered by cosine to the
        # question without them ranks what the rest of the question asks about (name_strip.rest_list).
        stripped = rest_list(ctx)
        if stripped:
            lists["name_stripped"] = stripped
    return lists, left_out


class FusionStage:
    """Reciprocal-rank fusion of the dense, lexical and (when selective) entity lists."""

    name = "fusion"

    def run(self, ctx: SearchContext) -> SearchContext:
        lists, left_out = fusion_lists(ctx)
        ranks = {}
        if lists.get("entity"):
            # An exact alias match is a yes-or-no signal and the list's order is recency, which says
            # nothing about the question: records linked to equally many of the query's names tie.
            ranks["entity"] = tied_ranks([len(ctx.pool[seq].entities) for seq in lists["entity"]])
        fused = rrf_fuse(lists, ctx.settings.rrf_k, ranks)
        ctx.ranking = []
        for rank, (seq, score) in enumerate(fused, start=1):
            cand = ctx.pool[seq]
            cand.fused_rank, cand.fused_score, cand.score = rank, score, score
            ctx.ranking.append(cand)
        fused_seqs = {seq for seq, _ in fused}
        for seq in ctx.generated.get("entity", []):  # entity-only candidates still reach the gate
            if seq not in fused_seqs:
                cand = ctx.pool[seq]
                cand.fused_rank, cand.fused_score, cand.score = len(ctx.ranking) + 1, 0.0, 0.0
                ctx.ranking.append(cand)
        if left_out:
            ctx.note(left_out)
        elif "entity" in ranks and len(set(ranks["entity"])) < len(ranks["entity"]):
            ctx.note("entity list fused with ties: records linked to the same number of the query's names share the "
                     "mean of their ranks (the list is in recency order, which says nothing about the question)")
        if "name_stripped" in lists:
            ctx.note(f"name-stripped list fused: the candidates ordered by cosine to \"{ctx.rest_query.text}\"")
        ctx.io(inputs={name: len(ctx.generated.get(name, [])) for name in ("dense", "lexical", "entity")}
               | {"rrf_k": ctx.settings.rrf_k, "fused_lists": sorted(lists)},
               outputs={"fused": [c.brief() for c in ctx.ranking]}
               | ({"name_stripped": [ctx.pool[q].record_id for q in lists["name_stripped"]]} if "name_stripped" in lists else {}))
        return ctx


class FreshnessStage:
    """Episodic records lose part of their fused score with age (event time, else creation time),
    for queries about the present or the recent past (``freshness_scope``)."""

    name = "freshness"

    def run(self, ctx: SearchContext) -> SearchContext:
        s = ctx.settings
        recency = asks_about_recency(ctx.query)
        ctx.io(inputs={"half_life_days": s.freshness_half_life_days, "weight": s.freshness_weight,
                       "scope": s.freshness_scope, "asks_about_recency": recency})
        if s.freshness_weight == 0:
            ctx.skip("freshness_weight is 0")
            return ctx
        if s.freshness_scope == "recency_questions" and not recency:
            ctx.skip("the query does not ask about the present or the recent past")
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


def name_terms(ctx: SearchContext) -> set[str]:
    """Query terms that belong to the matched entities' names (what "the rest of the question" leaves out)."""
    return {t for e in ctx.entities for key in (e.get("matched") or "", e["name"]) for t in query_terms(key, 64)}


def evidence_of(ctx: SearchContext, cand: Candidate, names_in_query: set[str] | None = None) -> Evidence:
    """The gate's view of one candidate (see :func:`.scoring.gate_check`)."""
    names = tuple(e["name"] for e in cand.entities)
    rest = None
    if names and ctx.lexical is not None:
        leave_out = names_in_query if names_in_query is not None else name_terms(ctx)
        rest = partial_score(ctx.lexical, cand.lexical_terms, leave_out | {t for n in names for t in query_terms(n, 64)})
    return Evidence(cand.cosine, cand.lexical, names, rest, tuple(ctx.unknown_names))


def below_result_floor(cand: Candidate, floor: float) -> str | None:
    """Why a candidate of a result set that passed is still dropped (weak on everything), or None."""
    if (cand.cosine is not None and cand.cosine >= floor) or (cand.lexical is not None and cand.lexical >= floor):
        return None
    cosine = "no cosine" if cand.cosine is None else f"cosine {cand.cosine:.2f}"
    lexical = "no lexical match" if cand.lexical is None else f"lexical score {cand.lexical:.2f}"
    return f"weak on every signal in a result set that passed ({cosine}, {lexical}; result floor {floor:g})"


class GateStage:
    """The empty-result gate, judged on the result set: nothing is returned when every candidate is
    weak on every signal; otherwise the fused order goes on untouched."""

    name = "gate"

    def run(self, ctx: SearchContext) -> SearchContext:
        s = ctx.settings
        floors = GateFloors.of(s)
        ctx.unknown_names = unknown_names(ctx.query, ctx.lexical)
        missing = [c.seq for c in ctx.ranking if c.cosine is None]
        if missing and ctx.query_vec is not None:
            sims = ctx.deps.index.similarity(ctx.query_vec, missing)
            for cand in ctx.ranking:
                if cand.cosine is None and cand.seq in sims:
                    cand.cosine = round(float(sims[cand.seq]), COSINE_DIGITS)
        rerank_on = ctx.settings.reranker_enabled if ctx.request.rerank is None else ctx.request.rerank
        ctx.floors_deferred = bool(rerank_on and s.reranker_mode == "replace_floors")
        cosines = [c.cosine for c in ctx.ranking if c.cosine is not None]
        lexicals = [c.lexical for c in ctx.ranking if c.lexical is not None]
        summary = {
            "cosine_floor": s.cosine_floor, "lexical_floor": s.lexical_floor,
            "entity_support_cosine": s.entity_support_cosine, "entity_support_lexical": s.entity_support_lexical,
            "cosine_floor_unknown_name": s.cosine_floor_unknown_name, "unknown_names": list(ctx.unknown_names),
            "best_cosine": max(cosines) if cosines else None, "best_lexical": max(lexicals) if lexicals else None,
            "entity_matches": sum(1 for c in ctx.ranking if c.entity_rank is not None),
            "candidates": len(ctx.ranking), "floors": "deferred to the reranker" if ctx.floors_deferred else "applied",
        }
        ctx.io(inputs={"candidates": len(ctx.ranking)} | {k: summary[k] for k in (
            "cosine_floor", "lexical_floor", "entity_support_cosine", "entity_support_lexical", "floors")})
        in_query = name_terms(ctx)
        evidence = [evidence_of(ctx, c, in_query) for c in ctx.ranking]
        verdicts = [gate_check(ev, floors) for ev in evidence]
        ent_rest = [ev.rest_lexical for ev in evidence if ev.entities and ev.rest_lexical is not None]
        ent_cos = [ev.cosine for ev in evidence if ev.entities and ev.cosine is not None]
        summary["best_entity_rest_lexical"] = max(ent_rest) if ent_rest else None
        summary["best_entity_cosine"] = max(ent_cos) if ent_cos else None
        summary["strong"] = sum(1 for passed, _ in verdicts if passed)
        first, reason = gate_set(evidence, floors)
        # The rule is for names that link too many records to point at any one (a speaker, a big
        # project: the same test as the fusion's); a name linking a few records is itself evidence.
        names = full_entity_names(ctx) if ctx.ranking else []
        # the gate open (a calibration pass): log every signal; the check off: compute nothing
        every_signal = s.cosine_floor <= -1.0
        rest = None
        if names and (every_signal or (first is not None and floors.name_rule_on)):
            rest = name_rest(ctx, names, in_query, floors, every_signal)
            first, reason = gate_set(evidence, floors, rest)
        elif first is not None and not every_signal and (short := short_list_names(ctx)):
            # a name linking few records is no evidence by itself either (scoring.short_list_check)
            names, rest = short, name_rest(ctx, short, in_query, floors, False, short=True)
            first, reason = gate_set(evidence, floors, rest)
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
            summary["name_model"] = {"probability": round(gate_model.probability(floors.name_model_weights, rest.model_values()), 6),
                                     "floor": floors.name_model_floor, "features": dict(zip(gate_model.FEATURES, rest.model_values()))}
        summary["passed"] = first is not None
        summary["reason"] = reason
        summary["decision"] = (f"passed: the result set passes on {ctx.ranking[first].record_id} ({reason})" if first is not None
                               else f"empty: {reason}")
        for cand, (passed, why) in zip(ctx.ranking, verdicts):
            own = f"this record: {why}" if passed else f"this record alone is weak ({why})"
            if ctx.floors_deferred:
                cand.gate = f"deferred to the reranker (gate: {summary['decision']}; {own})"
                cand.rerank = {"floor_passed": first is not None, "floor_reason": summary["decision"]}
            else:
                cand.gate = f"{summary['decision']}; {own}"
        ctx.gate_summary = summary
        rest_cosines = ctx.rest_query.cosines if ctx.rest_query else {}
        covers = ctx.rest_cover.per_candidate if ctx.rest_cover else {}
        ctx.io(outputs={"decision": summary["decision"], "candidates": [
            {"id": c.record_id, "cosine": _r(c.cosine), "lexical": _r(c.lexical), "entity": bool(ev.entities),
             "rest_lexical": _r(ev.rest_lexical), "rest_cosine": _r(rest_cosines.get(c.seq)), "rest_cover": covers.get(c.seq),
             "strong": passed}
            for c, ev, (passed, _) in zip(ctx.ranking, evidence, verdicts)],
            **{k: summary[k] for k in ("passed", "unknown_names", "best_cosine", "best_lexical", "entity_matches", "best_entity_cosine",
                                       "best_entity_rest_lexical", "strong", "known_names", "best_rest_cosine", "best_rest_lexical",
                                       "best_rest_both", "unheld_names", "names_linked_together_by", "known_names_short", "best_rest_cover",
                                       "best_rest_cover_joint", "rest_held")},
            **({"name_model": summary["name_model"]} if "name_model" in summary else {})})
        if first is None and not ctx.floors_deferred:
            for cand in list(ctx.ranking):
                ctx.drop(cand, f"gate: {reason}")
            ctx.ranking = []
            empty = self._empty_reason(ctx, summary, reason)
            summary["empty_reason"] = empty
            ctx.halt(empty)
        elif first is not None and not ctx.floors_deferred:
            kept = []
            for cand, (passed, _) in zip(ctx.ranking, verdicts):
                if passed or below_result_floor(cand, s.result_floor) is None:
                    kept.append(cand)
                else:
                    ctx.drop(cand, f"gate: {below_result_floor(cand, s.result_floor)}")
            summary["below_result_floor"] = len(ctx.ranking) - len(kept)
            ctx.ranking = kept
        return ctx

    def _empty_reason(self, ctx: SearchContext, summary: dict, reason: str) -> str:
        if summary["candidates"] == 0:
            reason = f"no record in the readable scopes passes the hard filter ({ctx.filter.describe()})"
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

    Reruns the generators with the historical statuses (dense only over the rows the wider filter
    adds; lexical from the doclists the lexical stage already read, so FTS5 is not asked again) and
    counts the records they find that are strong gate evidence but were excluded by lifecycle alone.
    """
    s = ctx.settings
    deps = ctx.deps
    floors = GateFloors.of(s)
    flt = ctx.filter.with_statuses(("provisional", "confirmed", "superseded", "expired"), include_lapsed=True)
    found: dict[int, Candidate] = {}
    mask = index_mask(deps.index, flt, [])
    if ctx.query_vec is not None:
        # Only rows the wider filter adds (superseded, expired, lapsed): usually few, so this is a
        # small gathered product, not a second scan of the whole matrix.
        if hasattr(mask, "without"):  # PostgreSQL: the same difference, as SQL
            dense_mask = mask.without(ctx.mask) if ctx.mask is not None else mask
        else:
            dense_mask = mask.copy()
            if ctx.mask is not None and ctx.mask.shape == dense_mask.shape:
                dense_mask &= ~ctx.mask
        for cand in dense_candidates(deps.store, deps.index, flt, dense_mask, ctx.query_vec, s.candidates_per_generator)[0]:
            found[cand.seq] = cand
    terms = query_terms(ctx.query, s.lexical_max_terms)
    lexical = None
    if terms:
        cands, lexical = lexical_candidates(deps.store, flt, readable_lookup(deps.index, mask), terms, s.candidates_per_generator,
                                            s.lexical_max_df_share, s.lexical_max_postings, doclists=ctx.lexical_doclists)
        for cand in cands:
            kept = found.setdefault(cand.seq, cand)
            kept.lexical, kept.lexical_terms = cand.lexical, cand.lexical_terms
    for cand in entity_candidates(deps.store, flt, ctx.entities, s.candidates_per_generator):
        found.setdefault(cand.seq, cand).entities = cand.entities
    if ctx.query_vec is not None:
        sims = deps.index.similarity(ctx.query_vec, [seq for seq, c in found.items() if c.cosine is None])
        for seq, value in sims.items():
            found[seq].cosine = round(float(value), COSINE_DIGITS)
    counts = {"superseded": 0, "expired": 0, "passing": 0, "ids": []}
    saved = ctx.lexical
    ctx.lexical = lexical
    try:
        passing = []
        for cand in found.values():
            lapsed = cand.status == "provisional" and cand.seq not in ctx.pool
            kind = "expired" if (cand.status == "expired" or lapsed) else cand.status
            if kind in ("superseded", "expired") and gate_check(evidence_of(ctx, cand), floors)[0]:
                passing.append((kind, cand))
        # a question the known-name check refused: older records count only if they support the rest of it
        if passing and not probe_rest_supported(ctx, [c for _, c in passing], floors):
            passing = []
        for kind, cand in passing:
            counts[kind] += 1
            counts["passing"] += 1
            counts["ids"].append(cand.record_id)
    finally:
        ctx.lexical = saved
    return counts


def collapse_window(limit: int) -> int:
    """How many of the best gate survivors are loaded and examined: three times the limit (at
    least ten more than it), ample for collapse and budget skips to still fill the limit."""
    return max(3 * limit, limit + 10)


def stored_vectors(blobs: list, dim: int) -> np.ndarray:
    """Rows of unit vectors from stored embedding blobs (a zero row for a missing or mis-sized one, as
    the index's ``vectors`` gives)."""
    out = np.zeros((len(blobs), dim), dtype=np.float32)
    for i, blob in enumerate(blobs):
        if blob is not None:
            vector = blob_to_vector(blob)
            if vector.shape[0] == dim:
                out[i] = vector
    return out


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
        # PostgreSQL keeps no vectors in memory: read them with the content, in the same statement
        with_vectors = hasattr(ctx.deps.index, "search_with_rows")
        with store.lock:
            rows = {row[0]: row for row in store.conn.execute(
                f"SELECT seq, status, content{', embedding' if with_vectors else ''} FROM records "
                f"WHERE seq IN ({','.join('?' * len(seqs))})", seqs)}
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
        if with_vectors:
            vectors = stored_vectors([rows[c.seq]["embedding"] for c in present], ctx.deps.index.dim)
        else:
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
        costs: list[int] = []  # counted lazily: candidates past the limit need no token count

        def counted():
            for cand in ctx.ranking:
                costs.append(count_tokens(cand.content or "") + overhead)
                yield costs[-1]

        decisions = fit_budget(counted(), budget, limit, len(ctx.ranking))
        kept: list[Candidate] = []
        for i, (cand, (decision, used)) in enumerate(zip(ctx.ranking, decisions)):
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
                ctx.drop(cand, f"token budget: {used} + {cost} > {budget}")
            else:
                ctx.drop(cand, f"beyond the result limit of {limit}")
        if kept:  # the full envelope (with entity links) only for what is returned
            store = ctx.deps.store
            with store.lock:
                records = {r.seq: r for r in fetch_records(store.conn, f"r.seq IN ({','.join('?' * len(kept))})", [c.seq for c in kept])}
                if ctx.access is not None:  # never name an entity the principal cannot read
                    restrict_links(records.values(), ctx.access.readable_keys)
            for cand in kept:
                cand.record = records.get(cand.seq)
        ctx.ranking = kept
        ctx.results = list(kept)
        ctx.budget_used = sum(c.tokens or 0 for c in kept)
        ctx.io(inputs={"candidates": len(decisions), "budget": budget, "limit": limit, "overhead_per_result": overhead},
               outputs={"kept": [{"id": c.record_id, "tokens": c.tokens} for c in kept], "used": ctx.budget_used})
        return ctx
