"""The lexical generator's arithmetic: term statistics over the readable records only, and a
lexical score in [0, 1] that means the same thing whatever the size of the store.

FTS5's own ``bm25()`` takes its document count, document frequencies and average length from the
whole index, so its scores (and the order they give) change when records a principal cannot read
are added, and they grow with the store, so a floor on them does not transfer from 1K to 500K
records. Here FTS5 is used only to find, per query term, which readable records hold it; the
statistics and the score come from those readable postings alone:

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
every word is "common"), or by more than ``max_postings`` of them (a cost bound: each kept term's
readable postings are read). Everything a principal sees therefore depends on readable records only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .filters import HardFilter
from .fts_query import STOP_WORDS, fts_expression


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


def readable_postings(store, flt: HardFilter, term: str, cap: int) -> list[int] | None:
    """Seqs of readable records holding ``term`` (newest first); None when more than ``cap`` do."""
    where, params = flt.sql("r")
    with store.lock:
        rows = store.conn.execute(
            "SELECT r.seq FROM records_fts JOIN records r ON r.seq = records_fts.rowid "
            f"WHERE records_fts MATCH ? AND {where} ORDER BY r.seq DESC LIMIT ?",
            [fts_expression([term]), *params, cap + 1],
        ).fetchall()
    if len(rows) > cap:
        return None
    return [row[0] for row in rows]


def lexical_search(store, flt: HardFilter, total: int, terms: list[str], k: int, max_share: float, max_postings: int) -> LexicalResult:
    """Rank readable records by their lexical score (see the module docstring); top ``k``.

    ``total`` is the number of readable records (the search's hard-filter row count). Ties are
    broken by the number of query terms held, then by recency (higher seq first).
    """
    result = LexicalResult(total=total)
    holders: dict[int, list[str]] = {}
    weights: dict[str, float] = {}
    for term in terms:
        postings = readable_postings(store, flt, term, max_postings) if total else []
        if postings is None:
            result.terms.append({"term": term, "documents": None, "idf": None, "used": False,
                                 "reason": f"in more than {max_postings} readable records"})
            continue
        documents = len(postings)
        if total >= SHARE_MIN_RECORDS and documents > max_share * total:
            result.terms.append({"term": term, "documents": documents, "idf": None, "used": False,
                                 "reason": f"in {documents} of {total} readable records (more than {max_share:.0%})"})
            continue
        weight = idf(total, documents)
        weights[term] = weight
        result.terms.append({"term": term, "documents": documents, "idf": round(weight, 6), "used": True, "reason": None})
        for seq in postings:
            holders.setdefault(seq, []).append(term)
    denominator = sum(weights.values())
    if not holders or denominator <= 0:
        return result
    scored = [(seq, sum(weights[t] for t in held) / denominator, tuple(held)) for seq, held in holders.items()]
    scored.sort(key=lambda item: (-item[1], -len(item[2]), -item[0]))
    result.ranked = scored[:k]
    return result


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


_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Capitalised words that name a time, not a thing a record would mention by that word.
_CALENDAR = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)


def unknown_names(query: str, result: LexicalResult | None) -> list[str]:
    """The query's names when none of them is held by a readable record; else ``[]``.

    A name is a capitalised word that is not the query's first word, a stop word, or a month or
    weekday. "What did Caroline research?" asked of a memory in which no record mentions Caroline
    is about someone this memory has never seen; the gate then asks more of the cosine signal,
    which a question's phrasing alone can lift. When any name of the query is held ("where does
    the user live, Porto or Lisbon?"), the query is partly about known things and nothing changes.
    Words left out of lexical search as too common count as held.
    """
    if result is None:
        return []
    held = {t["term"]: t["documents"] for t in result.terms}
    names: list[str] = []
    for position, chunk in enumerate(query.split()):
        if position == 0:
            continue
        for word in _WORD.findall(chunk):
            key = word.casefold()
            if word[0].isupper() and key not in STOP_WORDS and key not in _CALENDAR and word not in names:
                names.append(word)
    if not names or any(held.get(word.casefold()) != 0 for word in names):
        return []
    return names
