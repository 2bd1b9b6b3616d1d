"""Word-level support for the rest of a question that names a known entity.

"What did Jon research?" asked of Jon's memory: the name makes every record about Jon look close,
and the cosine of the question without the name ("What did research?") still finds turns about
anything Jon did. Whether the memory holds an answer shows in the words: does some record say
"research", "researching" or "researcher"? Three signals for the known-name model
(:mod:`.gate_model`), computed from the lexical stage's term statistics and the candidates' text:

- ``rest_held``: the idf-weighted share of the rest's key terms that some readable record holds,
  exactly or by stem (a question about something this memory never mentions scores low, whatever
  its cosines);
- ``rest_cover``: the best idf-weighted share of the rest's key terms one candidate holds by stem;
- ``rest_cover_joint``: the best ``name-stripped cosine + 0.5 × rest_cover`` of one candidate.

A key term is a query term (``fts_query.query_terms``) that is not part of a matched name, not a
word that only shapes a question ("kind", "favorite", "recently" …), not a calendar word or a
number, and has at least three letters. Its *stem* is its first five letters (the whole term when
shorter), and a record holds it when one of its words starts with the stem: crude, but it needs no
language model and matches "researching" to "research" and "lives" to "live". Each key term's idf
comes from the readable records holding it in that sense: one prefix lookup per key term (FTS5
``"stem"*``; a ``stem:*`` tsquery on PostgreSQL), counted over readable records only, so nothing
here depends on records the searcher cannot read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..text import index_fold as fold
from .lexical import idf, lookup_key, readable_lookup

if TYPE_CHECKING:
    from .pipeline import SearchContext

STEM = 5
JOINT_WEIGHT = 0.5  # how much a candidate's coverage adds to its name-stripped cosine in rest_cover_joint
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Words that shape a question or a time rather than name what it is about.
SHAPING_WORDS = frozenset(
    "kind type sort many much often long time times recently recent new first one two three favorite favourite "
    "january february march april may june july august september october november december monday tuesday wednesday "
    "thursday friday saturday sunday today yesterday tomorrow week weeks weekend month months year years day days ago "
    "last next before after since".split())


def stem(word: str) -> str:
    """A word's first five letters, case- and diacritic-folded as the full-text index folds words
    (the whole word when shorter)."""
    return fold(word)[:STEM]


def text_stems(text: str) -> set[str]:
    """Every prefix of three to five letters of every word of ``text`` (and each shorter word): a
    key term's stem is in this set exactly when some word of the text starts with it."""
    out = set()
    for word in _WORD.findall(text or ""):
        key = fold(word)
        out.add(key[:STEM])
        out.update(key[:k] for k in range(3, min(len(key), STEM)))
    return out


def key_terms(terms: list[str], name_terms: set[str]) -> list[str]:
    """The query terms that carry the rest of the question (see the module docstring)."""
    return [t for t in terms if " " not in t and len(t) >= 3 and not t.isdigit() and t not in name_terms
            and t not in SHAPING_WORDS]


@dataclass
class RestCover:
    """The rest's key terms with their weights, and the three signals (None: no key term)."""

    terms: dict[str, float] = field(default_factory=dict)  # stem -> idf weight
    held: float | None = None
    cover: float | None = None
    joint: float | None = None
    per_candidate: dict[int, float] = field(default_factory=dict)  # seq -> coverage


def readable_prefix_count(ctx: SearchContext, prefix: str, lut: np.ndarray | None = None) -> int:
    """Readable records holding a word that starts with ``prefix`` (letters and digits only); ``lut``
    is the search's readable lookup table when the caller has it already."""
    store = ctx.deps.store
    lut = readable_lookup(ctx.deps.index, ctx.mask) if lut is None else lut
    with store.lock:
        if store.backend == "postgresql":
            if not prefix or "'" in prefix or "\\" in prefix:
                return 0  # a stem is letters and digits only; never build a tsquery from anything else
            # the readable set is the filter's SQL (index/pg_vector.SqlFilter), never a list of seqs:
            # each posting's record is checked against it, and the readable ones counted
            row = store.conn.execute(
                "SELECT count(*) FROM records_fts f WHERE f.lexemes @@ ?::tsquery AND (SELECT true FROM records r "
                f"WHERE r.seq = f.rowid AND r.embedding_vec IS NOT NULL AND {lut.where})",
                [f"'{prefix}':*", *lut.params]).fetchone()
            return int(row[0]) if row else 0
        else:
            row = store.conn.execute("SELECT group_concat(rowid) FROM records_fts WHERE records_fts MATCH ?",
                                     (f'"{prefix}"*',)).fetchone()
    if not row or not row[0]:
        return 0
    postings = np.fromstring(row[0], dtype=np.int64, sep=",")
    postings = postings[postings < len(lut)]
    return int(lut[postings].sum())


def term_weights(ctx: SearchContext, name_terms: set[str]) -> tuple[dict[str, float], set[str]]:
    """Idf weight per key-term stem, from the readable records holding a word that starts with the
    stem (what "holding" means here), and the stems some readable record holds."""
    result = ctx.lexical
    counts = {t["term"]: t["documents"] for t in result.terms}
    weights: dict[str, float] = {}
    held: set[str] = set()
    lut = None
    known: dict[str, int] = {}
    for term in key_terms(list(counts), name_terms):
        key = stem(term)
        if key in weights:
            continue
        if lut is None:
            lut = readable_lookup(ctx.deps.index, ctx.mask)
            # the readable counts cache of this readable set and store state (exact, never stale):
            # a stem's count is read once per store state, not once per search (on PostgreSQL a
            # common stem's count checks each of its postings against the filter)
            version = getattr(ctx.mask, "records_version", None)
            known = ctx.deps.readable_term_counts(
                lookup_key(lut, ctx.deps.store.records_version() if version is None else version))
        documents = known.get(f"prefix:{key}")
        if documents is None:
            documents = known[f"prefix:{key}"] = readable_prefix_count(ctx, key, lut)
        weights[key] = max(weights.get(key, 0.0), idf(result.total, documents))
        if documents:
            held.add(key)
    return weights, held


def rest_cover(ctx: SearchContext, name_terms: set[str], cands: list, rest_cosines: dict[int, float]) -> RestCover:
    """The three word-level signals over ``cands`` (candidates with ``seq``); their text is read here."""
    if ctx.lexical is None:
        return RestCover()
    weights, held = term_weights(ctx, name_terms)
    total = sum(weights.values())
    if total <= 0:
        return RestCover(weights)
    out = RestCover(weights, held=round(sum(weights[s] for s in held) / total, 6))
    seqs = [c.seq for c in cands]
    if not seqs:
        return out
    store = ctx.deps.store
    with store.lock:
        texts = dict(store.conn.execute(f"SELECT seq, content FROM records WHERE seq IN ({','.join('?' * len(seqs))})", seqs).fetchall())
    for seq in seqs:
        stems = text_stems(texts.get(seq) or "")
        out.per_candidate[seq] = round(sum(w for s, w in weights.items() if s in stems) / total, 6)
    out.cover = max(out.per_candidate.values())
    joints = [rest_cosines[s] + JOINT_WEIGHT * v for s, v in out.per_candidate.items() if s in rest_cosines]
    out.joint = round(max(joints), 6) if joints else None
    return out
