"""The lexical generator's arithmetic: term statistics over the readable records only, and a
lexical score in [0, 1] that means the same thing whatever the size of the store.

FTS5's own ``bm25()`` takes its document count, document frequencies and average length from the
whole index, so its scores (and the order they give) change when records a principal cannot read
are added, and they grow with the store, so a floor on them does not transfer from 1K to 500K
records. Here FTS5 is used only to list, per query term, the records holding it (its doclist, no
``records`` row read); the search's index mask (the hard filter) then keeps the readable ones, and
the statistics and the score come from those readable postings alone:

- ``N`` is the number of records the search may read (the hard filter's row count), ``df(t)`` the
  number of those holding term ``t``, and ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``.
- A record's **lexical score** is the idf-weighted share of the query it covers:
  ``sum(idf(t) for query terms t in the record) / sum(idf(t) for all query terms)``. A record
  holding every informative query term scores 1.0 on any store size; one holding only the most
  common term scores little. Query terms no readable record holds count in the denominator with
  the largest idf, so a question about something absent (another person's name, a topic never
  stored) keeps a low score.

Terms are left out ("too common") only on readable counts: held by more than ``max_share`` of the
readable records (once there are at least ``SHARE_MIN_RECORDS`` of them: in a handful of records
every word is "common"), or by more than ``max_postings`` of them (it would add that many
candidates to score). Everything a principal sees therefore depends on readable records only; what
a search *costs* still grows with the term's postings in the whole store.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ...index.pg_vector import SqlFilter
from ...store.fulltext_queries import readable_term_postings, term_doclist

if TYPE_CHECKING:
    from ..filters import IndexMask
    from ..services import SearchServices

Readable = np.ndarray | SqlFilter  # which records the search may read: a lookup table by seq, or the filter's SQL


SHARE_MIN_RECORDS = 20


def idf(total: int, documents: int) -> float:
    """BM25's idf, never negative: ``ln(1 + (N - df + 0.5) / (df + 0.5))``."""
    return math.log(1.0 + (max(total - documents, 0) + 0.5) / (documents + 0.5))


@dataclass
class LexicalResult:
    """The lexical generator's answer for one query: ranked (seq, score, matched terms) and why."""

    total: int
    terms: list[dict] = field(default_factory=list)  # per query term: term, documents, idf, used, reason
    ranked: list[tuple[int, float, tuple[str, ...]]] = field(default_factory=list)

    @property
    def used_terms(self) -> list[str]:
        return [t["term"] for t in self.terms if t["used"]]

    def weight(self, terms) -> float:
        """Sum of idf over the given query terms (those known to this result)."""
        by_term = {t["term"]: t["idf"] for t in self.terms if t["idf"] is not None}
        return sum(by_term.get(term, 0.0) for term in terms)


def lookup_key(lut, records_version: int) -> tuple[int, str]:
    """Identifies a readable set in one store state (for caching readable term counts)."""
    if _is_sql(lut):  # PostgreSQL: the filter's SQL and parameters name the set
        return records_version, hashlib.blake2b(repr(lut.key).encode(), digest_size=16).hexdigest()
    return records_version, hashlib.blake2b(np.packbits(lut).tobytes(), digest_size=16).hexdigest()


def readable_lookup(index, mask):
    """A boolean table indexed by record seq: True for the records the hard filter admits.

    Built from the search's index mask (the hard filter over the vector index's rows), so the
    lexical generator can tell readable postings apart without reading any ``records`` row. On
    PostgreSQL the mask is a :class:`~memory_core.index.pg_vector.SqlFilter` (the filter's SQL and
    its row count, no list of rows) and is returned as it is: postings are then filtered in SQL.
    """
    if mask is None:
        return np.zeros(0, dtype=bool)
    if _is_sql(mask):
        return mask
    seqs = np.asarray(index.backend.seqs())
    n = min(len(seqs), len(mask))
    # the admitted rows' positions first, then their seqs: a take is ~2.5x faster than indexing
    # the seqs with the boolean mask itself (240 against 90 us at 50K rows)
    allowed = seqs[:n].take(np.flatnonzero(np.asarray(mask[:n], dtype=bool)))
    allowed = allowed[allowed >= 0]
    lut = np.zeros(int(allowed.max()) + 1 if allowed.size else 0, dtype=bool)
    lut[allowed] = True
    return lut


def _is_sql(readable) -> bool:
    return hasattr(readable, "where") and hasattr(readable, "count")


def readable_postings(store, lut, term: str, doclists: dict | None = None, cap: int | None = None) -> np.ndarray:
    """Seqs of the readable records holding ``term``, ascending (FTS5's doclist, then the lookup table).

    The doclist comes back as one ``group_concat`` string: for a term in tens of thousands of
    records that is an order of magnitude cheaper than a Python row per posting. ``doclists``
    keeps each term's unfiltered doclist for the search, so the lifecycle probe (another filter)
    does not ask FTS5 again.

    On PostgreSQL (``lut`` a SqlFilter) the postings are read already filtered, by one query joining
    the full-text index to ``records`` under the filter's SQL, and at most ``cap + 1`` of them:
    a term held by more readable records than the bound is left out whatever its exact count.
    """
    if _is_sql(lut):
        doclists = {} if doclists is None else doclists
        key = (lut.key, cap, term)
        if key not in doclists:
            prefetch_postings(store, lut, [term], cap, doclists)
        return doclists[key]
    postings = doclists.get(term) if doclists is not None else None
    if postings is None:
        postings = term_doclist(store, term)  # distinct rowids, ascending
        if doclists is not None:
            doclists[term] = postings
    postings = postings[postings < len(lut)]
    postings = postings[lut[postings]]
    return postings if cap is None else postings[:cap + 1]


def prefetch_postings(store, readable, terms: list[str], cap: int | None, doclists: dict) -> None:
    """PostgreSQL: the readable postings of every term not yet in ``doclists``, in one round trip."""
    need = [term for term in dict.fromkeys(terms) if (readable.key, cap, term) not in doclists]
    if need:
        for term, postings in readable_term_postings(store, readable, need, cap).items():
            doclists[(readable.key, cap, term)] = postings


def lexical_search(store, lut: np.ndarray, terms: list[str], k: int, max_share: float, max_postings: int,
                   known_counts: dict[str, int] | None = None, doclists: dict[str, np.ndarray] | None = None) -> LexicalResult:
    """Rank readable records by their lexical score (see the module docstring); top ``k``.

    ``lut`` says which seqs are readable (:func:`readable_lookup`); the number of readable records
    is its count. Ties are broken by the number of query terms held, then by recency (higher seq first).
    ``known_counts`` (term -> readable records holding it, valid for exactly this ``lut`` and store
    state; filled in here) lets a term already known to be too common be left out without reading
    its postings again.
    """
    total = int(lut.sum()) if _is_sql(lut) else int(np.count_nonzero(lut))
    result = LexicalResult(total=total)
    kept: list[tuple[str, float, np.ndarray]] = []
    known = known_counts if known_counts is not None else {}

    def too_common(documents: int) -> bool:
        return documents > max_postings or (total >= SHARE_MIN_RECORDS and documents > max_share * total)

    if _is_sql(lut) and total:
        doclists = doclists if doclists is not None else {}
        prefetch_postings(store, lut, [t for t in terms if known.get(t) is None or not too_common(known[t])], max_postings, doclists)
    for term in terms:
        cached = known.get(term)
        if cached is not None and too_common(cached):
            postings = None
            documents = cached
        else:
            # counting stops at max_postings + 1 (past it the term is left out whatever its count),
            # on both backends, so the two report the same numbers
            postings = readable_postings(store, lut, term, doclists, max_postings) if total else np.zeros(0, dtype=np.int64)
            documents = int(postings.size)
            known[term] = documents
        if documents > max_postings:
            result.terms.append({"term": term, "documents": documents, "idf": None, "used": False,
                                 "reason": f"in more than {max_postings} readable records"})
            continue
        if total >= SHARE_MIN_RECORDS and documents > max_share * total:
            result.terms.append({"term": term, "documents": documents, "idf": None, "used": False,
                                 "reason": f"in {documents} of {total} readable records (more than {max_share:.0%})"})
            continue
        weight = idf(total, documents)
        kept.append((term, weight, postings))
        result.terms.append({"term": term, "documents": documents, "idf": round(weight, 6), "used": True, "reason": None})
    denominator = sum(weight for _, weight, _ in kept)
    holding = [(term, weight, postings) for term, weight, postings in kept if postings.size]
    if not holding or denominator <= 0:
        return result
    seqs = np.concatenate([postings for _, _, postings in holding])
    unique, inverse = np.unique(seqs, return_inverse=True)
    # sums in a fixed order (the query's term order), so equal inputs give equal floats
    scores = np.zeros(unique.size)
    counts = np.zeros(unique.size, dtype=np.int64)
    offset = 0
    for _, weight, postings in holding:
        idx = inverse[offset:offset + postings.size]
        scores[idx] += weight
        counts[idx] += 1
        offset += postings.size
    scores /= denominator
    order = np.lexsort((-unique, -counts, -scores))[:k]
    for i in order.tolist():
        seq = int(unique[i])
        held = tuple(term for term, _, postings in holding if _holds(postings, seq))
        result.ranked.append((seq, float(scores[i]), held))
    return result


def _holds(sorted_seqs: np.ndarray, seq: int) -> bool:
    at = int(np.searchsorted(sorted_seqs, seq))
    return at < sorted_seqs.size and int(sorted_seqs[at]) == seq


def partial_score(result: LexicalResult, matched: tuple[str, ...], leave_out: set[str]) -> float | None:
    """The lexical score counting only query terms outside ``leave_out`` (None if no such term).

    Used by the gate: an entity match needs support from the rest of the question, i.e. the words
    of the query that are not the entity's name.
    """
    rest = [t["term"] for t in result.terms if t["used"] and t["term"] not in leave_out]
    denominator = result.weight(rest)
    if denominator <= 0:
        return None
    return result.weight([t for t in matched if t in rest]) / denominator


def readable_counts(deps: SearchServices, readable: Readable, mask: IndexMask) -> dict[str, int]:
    """The retriever's cache of readable term counts for this readable set in this store state."""
    version = getattr(mask, "records_version", None)  # PostgreSQL reads it with the filter's count
    return deps.readable_term_counts(lookup_key(readable, deps.store.records_version() if version is None else version))
