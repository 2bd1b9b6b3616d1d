"""The three candidate generators (dense, lexical, entity) and the query embedding they share.

Each generator is a plain function of (store/index, filter, query) that returns candidates in its
own rank order, so the gate's lifecycle probe can rerun it with a different filter; the stages
wrap them for the pipeline. Every SQL query carries the hard filter's predicate, and the dense
search runs under its mask, so nothing outside the filter is ever proposed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..embed import embedder_runtime
from ..policy.rules import normalise_alias
from .filters import HardFilter
from .fts_query import fts_expression, query_mentions, query_terms
from .search_types import Candidate
from .pipeline import SearchContext

_META = "r.seq, r.id, r.type, r.status, r.scope_kind, r.scope_id, r.created_at, r.event_at, r.expires_at"


def _candidate(row: Any) -> Candidate:
    return Candidate(
        seq=row["seq"], record_id=row["id"], type=row["type"], status=row["status"],
        scope=f"{row['scope_kind']}:{row['scope_id']}", created_at=row["created_at"], event_at=row["event_at"],
    )


def dense_candidates(store, index, flt: HardFilter, mask: np.ndarray, query_vec: np.ndarray, k: int) -> tuple[list[Candidate], list[dict], dict]:
    """Top ``k`` records by cosine under the mask; also rows refused by the re-check (stale index)
    and how the index answered (exact scan or approximate index)."""
    hits, how = index.search_explained(query_vec, k, mask)
    if not hits:
        return [], [], how
    seqs = [seq for seq, _ in hits]
    with store.lock:
        rows = store.conn.execute(
            f"SELECT {_META} FROM records r WHERE r.seq IN ({','.join('?' * len(seqs))})", seqs
        ).fetchall()
    by_seq = {row["seq"]: row for row in rows}
    out: list[Candidate] = []
    refused: list[dict] = []
    for seq, cosine in hits:
        row = by_seq.get(seq)
        why = "record no longer exists" if row is None else flt.admits(row)
        if why:
            refused.append({"seq": seq, "reason": f"index row disagrees with the store: {why}"})
            continue
        cand = _candidate(row)
        cand.dense_rank = len(out) + 1
        cand.cosine = float(cosine)
        out.append(cand)
    return out, refused, how


LEXICAL_PREFETCH = 4  # the FTS-only pass reads this many times k before the filter is applied


def lexical_candidates(store, flt: HardFilter, expression: str, k: int, weights: tuple[float, float, float],
                       seen: dict[int, float] | None = None) -> list[Candidate]:
    """Top ``k`` FTS5 matches by BM25 among records passing the filter (score made positive).

    First the FTS index alone ranks its matches and the best ``LEXICAL_PREFETCH * k`` are checked
    against the filter (no per-match lookup of the large ``records`` rows). If that leaves fewer
    than ``k`` while more matches exist, the exact join over every match runs instead; the answer
    is the same either way, since any allowed row outside the prefetch ranks below all of it.
    """
    where, params = flt.sql("r")
    w = ", ".join(str(float(x)) for x in weights)
    prefetch = LEXICAL_PREFETCH * k
    with store.lock:
        top = store.conn.execute(
            f"SELECT rowid, -bm25(records_fts, {w}) AS score FROM records_fts WHERE records_fts MATCH ? "
            "ORDER BY score DESC, rowid DESC LIMIT ?",
            (expression, prefetch),
        ).fetchall()
        scores = {row[0]: float(row[1]) for row in top}
        if seen is not None:  # the FTS-only ranking, whatever the filter (the lifecycle probe reuses it)
            seen.update(scores)
        rows = []
        if scores:
            seqs = list(scores)
            found = store.conn.execute(
                f"SELECT {_META} FROM records r WHERE r.seq IN ({','.join('?' * len(seqs))}) AND {where}", [*seqs, *params]
            ).fetchall()
            rows = sorted(found, key=lambda row: (-scores[row["seq"]], -row["seq"]))[:k]
        if len(rows) < k and len(top) == prefetch:
            sql = (
                f"SELECT {_META}, -bm25(records_fts, {w}) AS score FROM records_fts "
                f"JOIN records r ON r.seq = records_fts.rowid "
                f"WHERE records_fts MATCH ? AND {where} ORDER BY score DESC, r.seq DESC LIMIT ?"
            )
            rows = store.conn.execute(sql, [expression, *params, k]).fetchall()
            scores = {row["seq"]: float(row["score"]) for row in rows}
    out = []
    for rank, row in enumerate(rows, start=1):
        cand = _candidate(row)
        cand.lexical_rank = rank
        cand.bm25 = scores[row["seq"]]
        out.append(cand)
    return out


def matched_entities(store, scopes: tuple[str, ...] | list[str], keys: list[str], entity_ids: list[str]) -> list[dict[str, str]]:
    """Live entities in readable scopes whose normalised alias is one of ``keys`` (or whose id is given)."""
    if not scopes or not (keys or entity_ids):
        return []
    pairs = [scope.split(":", 1) for scope in scopes]
    scope_sql = f"(e.scope_kind, e.scope_id) IN (VALUES {', '.join('(?, ?)' for _ in pairs)})"
    scope_params = [part for pair in pairs for part in pair]
    found: dict[str, dict[str, str]] = {}
    with store.lock:
        if keys:
            rows = store.conn.execute(
                "SELECT a.alias_norm, e.id, e.canonical_name, e.kind FROM entity_aliases a JOIN entities e ON e.id = a.entity_id "
                f"WHERE a.alias_norm IN ({','.join('?' * len(keys))}) AND e.status != 'merged' AND {scope_sql} ORDER BY e.id",
                [*keys, *scope_params],
            ).fetchall()
            for row in rows:
                found.setdefault(row["id"], {"id": row["id"], "name": row["canonical_name"], "kind": row["kind"], "matched": row["alias_norm"]})
        if entity_ids:
            rows = store.conn.execute(
                f"SELECT e.id, e.canonical_name, e.kind FROM entities e WHERE e.id IN ({','.join('?' * len(entity_ids))}) "
                f"AND e.status != 'merged' AND {scope_sql}",
                [*entity_ids, *scope_params],
            ).fetchall()
            for row in rows:
                found.setdefault(row["id"], {"id": row["id"], "name": row["canonical_name"], "kind": row["kind"], "matched": row["id"]})
    return list(found.values())


ENTITY_LINK_SCAN = 4  # links examined per matched entity, as a multiple of k (newest links first)


def entity_candidates(store, flt: HardFilter, entities: list[dict[str, str]], k: int) -> list[Candidate]:
    """Records linked to the matched entities, passing the filter, most recent first.

    Only the ``ENTITY_LINK_SCAN * k`` most recently made links of each entity are examined, so an
    entity linked to thousands of records (a big project) costs no more than a small one.
    """
    if not entities:
        return []
    by_id = {e["id"]: e for e in entities}
    where, params = flt.sql("r")
    recent = " UNION ALL ".join(
        "SELECT * FROM (SELECT record_id, entity_id FROM record_entities WHERE entity_id = ? ORDER BY rowid DESC LIMIT ?)"
        for _ in by_id
    )
    sql = (
        f"SELECT {_META}, group_concat(x.entity_id) AS entity_ids FROM ({recent}) x "
        f"JOIN records r ON r.id = x.record_id WHERE {where} "
        f"GROUP BY r.seq ORDER BY COALESCE(r.event_at, r.created_at) DESC, r.seq DESC LIMIT ?"
    )
    scan = ENTITY_LINK_SCAN * k
    with store.lock:
        rows = store.conn.execute(sql, [*(v for eid in by_id for v in (eid, scan)), *params, k]).fetchall()
    out = []
    for rank, row in enumerate(rows, start=1):
        cand = _candidate(row)
        cand.entity_rank = rank
        cand.entities = [{"id": eid, "name": by_id[eid]["name"]} for eid in sorted(set(row["entity_ids"].split(",")))]
        out.append(cand)
    return out


# -- stages ---------------------------------------------------------------------------------------


def _merge(ctx: SearchContext, generator: str, found: list[Candidate]) -> None:
    """Add a generator's candidates to the pool, merging signals for records already there."""
    order = []
    for cand in found:
        existing = ctx.pool.get(cand.seq)
        if existing is None:
            ctx.pool[cand.seq] = cand
        elif generator == "dense":
            existing.dense_rank, existing.cosine = cand.dense_rank, cand.cosine
        elif generator == "lexical":
            existing.lexical_rank, existing.bm25 = cand.lexical_rank, cand.bm25
        else:
            existing.entity_rank, existing.entities = cand.entity_rank, cand.entities
        order.append(cand.seq)
    ctx.generated[generator] = order


class QueryEmbeddingStage:
    name = "query_embedding"

    def run(self, ctx: SearchContext) -> SearchContext:
        embedder = ctx.deps.embedder
        ctx.query_vec, cached = ctx.deps.query_vector(ctx.query, ctx.settings)
        ctx.io(inputs={"query": ctx.query}, outputs={
            "model": embedder.model_name, "version": embedder.model_version, "dim": int(ctx.query_vec.shape[0]),
            "runtime": embedder_runtime(embedder), "cache": "hit" if cached else "miss"})
        return ctx


class DenseStage:
    name = "dense"

    def run(self, ctx: SearchContext) -> SearchContext:
        k = ctx.settings.candidates_per_generator
        allowed = int(ctx.mask.sum()) if ctx.mask is not None else 0
        ctx.io(inputs={"k": k, "indexed_rows_allowed": allowed})
        if allowed == 0:
            _merge(ctx, "dense", [])
            ctx.note("no indexed record passes the hard filter")
            ctx.io(outputs={"candidates": []})
            return ctx
        found, refused, how = dense_candidates(ctx.deps.store, ctx.deps.index, ctx.filter, ctx.mask, ctx.query_vec, k)
        for item in refused:
            ctx.note(f"seq {item['seq']}: {item['reason']}")
        _merge(ctx, "dense", found)
        ctx.io(outputs={"index": how, "candidates": [{"id": c.record_id, "rank": c.dense_rank, "cosine": round(c.cosine, 6)} for c in found]})
        return ctx


def informative_terms(deps, terms: list[str], max_share: float, max_postings: int | None = None) -> tuple[list[str], list[dict[str, Any]]]:
    """Split query terms into those worth matching and those left out, with why.

    A single-word term held by more than ``max_share`` of all records is left out: BM25 gives it
    next to no weight, and matching it would make FTS5 score a large part of the store. Then, while
    the kept terms together match more than ``max_postings`` records, the most common one is left
    out too, down to none (FTS5 computes BM25 for every match, so this bounds the cost on large
    stores; a query of only common words then gets no lexical candidates there). Identifier
    phrases, whose counts the vocabulary cannot give, are always kept.
    """
    words = [t for t in terms if " " not in t]
    counts = deps.term_document_counts(words) if words else {}
    total = deps.document_count() if counts else 0
    kept, dropped = [], []
    for term in terms:
        documents = counts.get(term, 0)
        if total and documents > max_share * total:
            dropped.append({"term": term, "documents": documents,
                            "reason": f"in {documents} of {total} records (more than {max_share:.0%})"})
        else:
            kept.append(term)
    if max_postings is not None:
        while kept and sum(counts.get(t, 0) for t in kept) > max_postings:
            common = max(kept, key=lambda t: (counts.get(t, 0), t))
            kept.remove(common)
            dropped.append({"term": common, "documents": counts[common],
                            "reason": f"most common remaining term while the terms occur in more than {max_postings} records"})
    return kept, dropped


class LexicalStage:
    name = "lexical"

    def run(self, ctx: SearchContext) -> SearchContext:
        s = ctx.settings
        terms = query_terms(ctx.query, s.lexical_max_terms)
        kept, dropped = informative_terms(ctx.deps, terms, s.lexical_max_df_share, s.lexical_max_postings)
        expression = fts_expression(kept)
        ctx.io(inputs={"k": s.candidates_per_generator, "terms": terms, "dropped_terms": dropped,
                       "fts_expression": expression, "column_weights": list(s.bm25_column_weights)})
        if expression is None:
            _merge(ctx, "lexical", [])
            why = "every query term is too common to search" if terms else "no searchable terms once stop words and operator syntax are removed"
            ctx.skip(why)
            ctx.io(outputs={"candidates": []})
            return ctx
        found = lexical_candidates(ctx.deps.store, ctx.filter, expression, s.candidates_per_generator, tuple(s.bm25_column_weights),
                                   seen=ctx.lexical_seen)
        _merge(ctx, "lexical", found)
        ctx.io(outputs={"candidates": [{"id": c.record_id, "rank": c.lexical_rank, "bm25": round(c.bm25, 6)} for c in found]})
        return ctx


class EntityStage:
    name = "entity"

    def run(self, ctx: SearchContext) -> SearchContext:
        s = ctx.settings
        keys = query_mentions(ctx.query, s.entity_max_ngram)
        hint_ids = [h for h in ctx.request.entity_hints if h.startswith("ent_")]
        for hint in ctx.request.entity_hints:
            key = normalise_alias(hint)
            if key and key not in keys:
                keys.append(key)
        entities = matched_entities(ctx.deps.store, ctx.filter.scopes, keys, hint_ids)
        ctx.entities = entities
        ctx.io(inputs={"k": s.candidates_per_generator, "lookup_keys": len(keys), "hints": list(ctx.request.entity_hints)},
               outputs={"entities": entities})
        found = entity_candidates(ctx.deps.store, ctx.filter, entities, s.candidates_per_generator)
        _merge(ctx, "entity", found)
        ctx.io(outputs={"candidates": [{"id": c.record_id, "rank": c.entity_rank, "entities": [e["id"] for e in c.entities]} for c in found]})
        if not entities:
            ctx.note("no alias in the query or hints names an entity in a readable scope")
        return ctx
