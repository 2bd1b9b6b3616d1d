"""Candidates as the generators make them, and the pool they are merged into before fusion."""

from __future__ import annotations

from typing import Any

from ..search_types import Candidate

# Cosines are rounded to 4 decimals (ties then go to the lower seq): the index's float32 products
# can differ in the last bits with the size of the matrix, i.e. with records the principal cannot read.
COSINE_DIGITS = 4
GENERATORS = ("dense", "lexical", "entity")


def candidate_from_row(row: Any) -> Candidate:
    """A candidate from a row of ``store.search_queries.CANDIDATE_COLUMNS``."""
    return Candidate(
        seq=row["seq"], record_id=row["id"], type=row["type"], status=row["status"],
        scope=f"{row['scope_kind']}:{row['scope_id']}", created_at=row["created_at"], event_at=row["event_at"],
    )


def merge_hits(lists: list[tuple[str, list[Candidate]]]) -> tuple[dict[int, Candidate], dict[str, list[int]]]:
    """The candidate pool (seq -> candidate) of the generators' lists, merged in the order given:
    a record found by several generators is one candidate carrying each one's rank and signal.
    Also each generator's list as seqs, in its own rank order."""
    pool: dict[int, Candidate] = {}
    generated: dict[str, list[int]] = {}
    for generator, found in lists:
        order = []
        for cand in found:
            existing = pool.get(cand.seq)
            if existing is None:
                pool[cand.seq] = cand
            elif generator == "dense":
                existing.dense_rank, existing.cosine = cand.dense_rank, cand.cosine
            elif generator == "lexical":
                existing.lexical_rank, existing.lexical, existing.lexical_terms = cand.lexical_rank, cand.lexical, cand.lexical_terms
            else:
                existing.entity_rank, existing.entities = cand.entity_rank, cand.entities
            order.append(cand.seq)
        generated[generator] = order
    return pool, generated
