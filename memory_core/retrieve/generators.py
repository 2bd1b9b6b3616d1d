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
from ..text import normalise_alias
from .filters import HardFilter
from .fts_query import query_mentions, query_terms
from .lexical import LexicalResult, lexical_search, lookup_key, readable_lookup
from .search_types import Candidate
from .pipeline import SearchContext

_META = "r.seq, r.id, r.type, r.status, r.scope_kind, r.scope_id, r.created_at, r.event_at, r.expires_at"


def _candidate(row: Any) -> Candidate:
    return Candidate(
        seq=row["seq"], record_id=row["id"], type=row["type"], status=row["status"],
        scope=f"{row['scope_kind']}:{row['scope_id']}", created_at=row["created_at"], event_at=row["event_at"],
    )


COSINE_DIGITS = 4


def dense_candidates(store, index, flt: HardFilter, mask: np.ndarray, query_vec: np.ndarray, k: int) -> tuple[list[Candidate], list[dict], dict]:
    """Top ``k`` records by cosine under the mask; also rows refused by the re-check (stale index)
    and how the index answered (exact scan or approximate index)."""
    by_seq = None
    if hasattr(index, "search_with_rows"):  # PostgreSQL: the rows come with the hits, in one statement
        hits, how, rows = index.search_with_rows(query_vec, k, mask, _META)
        by_seq = {row["seq"]: row for row in rows}
    else:
        hits, how = index.search_explained(query_vec, k, mask)
    # Cosines are rounded to 4 decimals and ties ordered by seq: the index's float32 products can
    # differ in the last bits with the size of the matrix, i.e. with records the principal cannot read.
    hits = sorted(((seq, round(float(cosine), COSINE_DIGITS)) for seq, cosine in hits), key=lambda hit: (-hit[1], hit[0]))
    if not hits:
        return [], [], how
    if by_seq is None:
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


def lexical_candidates(store, flt: HardFilter, lut, terms: list[str], k: int, max_share: float, max_postings: int,
                       known_counts: dict[str, int] | None = None, doclists: dict | None = None) -> tuple[list[Candidate], LexicalResult]:
    """Top ``k`` readable records by lexical score (:mod:`.lexical`), as candidates.

    ``lut`` marks the seqs the hard filter admits (from the index mask); each candidate's row is
    checked against the filter again, as the dense generator does, in case the index is stale.
    """
    result = lexical_search(store, lut, terms, k, max_share, max_postings, known_counts, doclists)
    if not result.ranked:
        return [], result
    seqs = [seq for seq, _, _ in result.ranked]
    with store.lock:
        rows = {row["seq"]: row for row in store.conn.execute(
            f"SELECT {_META} FROM records r WHERE r.seq IN ({','.join('?' * len(seqs))})", seqs)}
    out = []
    for seq, score, held in result.ranked:
        row = rows.get(seq)
        if row is None or flt.admits(row):
            continue
        cand = _candidate(row)
        cand.lexical_rank = len(out) + 1
        cand.lexical = score
        cand.lexical_terms = held
        out.append(cand)
    return out, result


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
                f"WHERE a.alias_norm IN ({','.join('?' * len(keys))}) AND e.status != 'merged' AND {scope_sql} "
                "ORDER BY e.canonical_name, e.created_at, e.id",
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
    """Records linked to the matched entities, passing the filter: those linked to more of them
    first, then the most recent (the fusion treats records linked to equally many as tied).

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
        f"GROUP BY r.seq ORDER BY count(DISTINCT x.entity_id) DESC, COALESCE(r.event_at, r.created_at) DESC, r.seq DESC LIMIT ?"
    )
    scan = ENTITY_LINK_SCAN * k
    with store.lock:
        rows = store.conn.execute(sql, [*(v for eid in by_id for v in (eid, scan)), *params, k]).fetchall()
    out = []
    for rank, row in enumerate(rows, start=1):
        cand = _candidate(row)
        cand.entity_rank = rank
        # ordered by name (then id): ids are random, and nothing shown may depend on them
        eids = sorted(set(row["entity_ids"].split(",")), key=lambda eid: (by_id[eid]["name"], eid))
        cand.entities = [{"id": eid, "name": by_id[eid]["name"]} for eid in eids]
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
            existing.lexical_rank, existing.lexical, existing.lexical_terms = cand.lexical_rank, cand.lexical, cand.lexical_terms
        else:
            existing.entity_rank, existing.entities = cand.entity_rank, cand.entities
        order.append(cand.seq)
    ctx.generated[generator] = order


class QueryEmbeddingStage:
    name = "query_embedding"

    def run(self, ctx: SearchContext) -> SearchContext:
        embedder = ctx.deps.embedder
        ctx.io(inputs={"query": ctx.query}, outputs={
            "model": embedder.model_name, "version": embedder.model_version, "dim": int(embedder.dim),
            "runtime": embedder_runtime(embedder)})
        vector = ctx.deps.cached_query_vector(ctx.query, ctx.settings)
        if vector is not None:
            ctx.query_vec = vector
            ctx.io(outputs={"cache": "hit"})
        elif ctx.settings.overlap_query_embedding:
            # Lexical and entity search need no vector: they run while a worker thread embeds,
            # and the dense stage waits for the vector (SearchContext.wait_query_vector).
            ctx.pending_query_vec = ctx.deps.query_vector_in_background(ctx.query, ctx.settings)
            ctx.io(outputs={"cache": "miss", "mode": "overlapped with the lexical and entity stages"})
        else:
            ctx.query_vec, cached = ctx.deps.query_vector(ctx.query, ctx.settings)
            ctx.io(outputs={"cache": "hit" if cached else "miss", "mode": "in line"})
        return ctx


class DenseStage:
    name = "dense"

    def run(self, ctx: SearchContext) -> SearchContext:
        k = ctx.settings.candidates_per_generator
        allowed = int(ctx.mask.sum()) if ctx.mask is not None else 0
        ctx.wait_query_vector()  # also when nothing is allowed: later stages may compare with it
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


class LexicalStage:
    """Lexical candidates with statistics over the readable records only (:mod:`.lexical`)."""

    name = "lexical"

    def run(self, ctx: SearchContext) -> SearchContext:
        s = ctx.settings
        terms = query_terms(ctx.query, s.lexical_max_terms)
        lut = readable_lookup(ctx.deps.index, ctx.mask)
        ctx.io(inputs={"k": s.candidates_per_generator, "terms": terms, "readable_records": int(lut.sum())})
        if not terms:
            _merge(ctx, "lexical", [])
            ctx.lexical = None
            ctx.skip("no searchable terms once stop words and operator syntax are removed")
            ctx.io(outputs={"candidates": []})
            return ctx
        version = getattr(ctx.mask, "records_version", None)  # PostgreSQL reads it with the filter's count
        counts = ctx.deps.readable_term_counts(lookup_key(lut, ctx.deps.store.records_version() if version is None else version))
        found, result = lexical_candidates(ctx.deps.store, ctx.filter, lut, terms, s.candidates_per_generator,
                                           s.lexical_max_df_share, s.lexical_max_postings, counts, ctx.lexical_doclists)
        ctx.lexical = result
        _merge(ctx, "lexical", found)
        ctx.io(outputs={"term_statistics": result.terms,
                        "dropped_terms": [{"term": t["term"], "documents": t["documents"], "reason": t["reason"]}
                                          for t in result.terms if not t["used"]],
                        "candidates": [{"id": c.record_id, "rank": c.lexical_rank, "lexical": round(c.lexical, 6),
                                        "terms": list(c.lexical_terms)} for c in found]})
        if not result.used_terms:
            ctx.note("every query term is too common among the readable records to search")
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
