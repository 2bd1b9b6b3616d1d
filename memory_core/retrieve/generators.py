"""The three candidate generators (dense, lexical, entity) and the query embedding they share.

Each generator is a plain function of (store/index, filter, query) that returns candidates in its
own rank order, so the gate's lifecycle probe can rerun it with a different filter; the stages
wrap them for the pipeline. Every SQL query carries the hard filter's predicate, and the dense
search runs under its mask, so nothing outside the filter is ever proposed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..policy.rules import normalise_alias
from .filters import HardFilter
from .fts_query import build_fts_query, query_mentions
from .model import Candidate
from .pipeline import SearchContext

_META = "r.seq, r.id, r.type, r.status, r.scope_kind, r.scope_id, r.created_at, r.event_at, r.expires_at"


def _candidate(row: Any) -> Candidate:
    return Candidate(
        seq=row["seq"], record_id=row["id"], type=row["type"], status=row["status"],
        scope=f"{row['scope_kind']}:{row['scope_id']}", created_at=row["created_at"], event_at=row["event_at"],
    )


def dense_candidates(store, index, flt: HardFilter, mask: np.ndarray, query_vec: np.ndarray, k: int) -> tuple[list[Candidate], list[dict]]:
    """Top ``k`` records by cosine under the mask; also rows refused by the re-check (stale index)."""
    hits = index.search(query_vec, k, mask)
    if not hits:
        return [], []
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
    return out, refused


def lexical_candidates(store, flt: HardFilter, expression: str, k: int, weights: tuple[float, float, float]) -> list[Candidate]:
    """Top ``k`` FTS5 matches by BM25 among records passing the filter (score made positive)."""
    where, params = flt.sql("r")
    w = ", ".join(str(float(x)) for x in weights)
    sql = (
        f"SELECT {_META}, -bm25(records_fts, {w}) AS score FROM records_fts "
        f"JOIN records r ON r.seq = records_fts.rowid "
        f"WHERE records_fts MATCH ? AND {where} ORDER BY score DESC, r.seq DESC LIMIT ?"
    )
    with store.lock:
        rows = store.conn.execute(sql, [expression, *params, k]).fetchall()
    out = []
    for rank, row in enumerate(rows, start=1):
        cand = _candidate(row)
        cand.lexical_rank = rank
        cand.bm25 = float(row["score"])
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


def entity_candidates(store, flt: HardFilter, entities: list[dict[str, str]], k: int) -> list[Candidate]:
    """Records linked to the matched entities, passing the filter, most recent first."""
    if not entities:
        return []
    ids = [e["id"] for e in entities]
    by_id = {e["id"]: e for e in entities}
    where, params = flt.sql("r")
    sql = (
        f"SELECT {_META}, group_concat(re.entity_id) AS entity_ids FROM record_entities re "
        f"JOIN records r ON r.id = re.record_id "
        f"WHERE re.entity_id IN ({','.join('?' * len(ids))}) AND {where} "
        f"GROUP BY r.seq ORDER BY COALESCE(r.event_at, r.created_at) DESC, r.seq DESC LIMIT ?"
    )
    with store.lock:
        rows = store.conn.execute(sql, [*ids, *params, k]).fetchall()
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
        ctx.query_vec = np.asarray(embedder.embed([ctx.query])[0], dtype=np.float32)
        ctx.io(inputs={"query": ctx.query}, outputs={"model": embedder.model_name, "version": embedder.model_version, "dim": int(ctx.query_vec.shape[0])})
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
        found, refused = dense_candidates(ctx.deps.store, ctx.deps.index, ctx.filter, ctx.mask, ctx.query_vec, k)
        for item in refused:
            ctx.note(f"seq {item['seq']}: {item['reason']}")
        _merge(ctx, "dense", found)
        ctx.io(outputs={"candidates": [{"id": c.record_id, "rank": c.dense_rank, "cosine": round(c.cosine, 6)} for c in found]})
        return ctx


class LexicalStage:
    name = "lexical"

    def run(self, ctx: SearchContext) -> SearchContext:
        s = ctx.settings
        expression = build_fts_query(ctx.query, s.lexical_max_terms)
        ctx.io(inputs={"k": s.candidates_per_generator, "fts_expression": expression, "column_weights": list(s.bm25_column_weights)})
        if expression is None:
            _merge(ctx, "lexical", [])
            ctx.skip("no searchable terms once stop words and operator syntax are removed")
            ctx.io(outputs={"candidates": []})
            return ctx
        found = lexical_candidates(ctx.deps.store, ctx.filter, expression, s.candidates_per_generator, tuple(s.bm25_column_weights))
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
