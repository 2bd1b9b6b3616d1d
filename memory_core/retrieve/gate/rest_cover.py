"""Word-level support for the rest of a question that names a known entity.

"What did Jon research?" asked of Jon's memory: the name makes every record about Jon look close,
and the cosine of the question without the name ("What did research?") still finds turns about
anything Jon did. Whether the memory holds an answer shows in the words: does some record say
"research", "researching" or "researcher"? Three signals for the known-name model
(:mod:`.model`), computed from the lexical stage's term statistics and the candidates' text:

- ``rest_held``: the idf-weighted share of the rest's key terms that some readable record holds,
  exactly or by stem (a question about something this memory never mentions scores low, whatever
  its cosines);
- ``rest_cover``: the best idf-weighted share of the rest's key terms one candidate holds by stem;
- ``rest_cover_joint``: the best ``name-stripped cosine + 0.5 × rest_cover`` of one candidate.

A key term is a query term (``text.query_terms``) that is not part of a matched name, not a
word that only shapes a question ("kind", "favorite", "recently" …), not a calendar word or a
number, and has at least three letters. Its *stem* is its first five letters (``text.prefix_stem``;
the whole term when shorter), and a record holds it when one of its words starts with the stem:
crude, but it needs no language model and matches "researching" to "research" and "lives" to "live". Each key term's idf
comes from the readable records holding it in that sense: one prefix lookup per key term (FTS5
``"stem"*``; a ``stem:*`` tsquery on PostgreSQL), counted over readable records only, so nothing
here depends on records the searcher cannot read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...store.fulltext_queries import readable_prefix_count
from ...store.search_queries import record_contents
from ...text import SHAPING_WORDS, prefix_stem, prefix_stems
from ..filters import IndexMask
from ..generate.lexical_score import LexicalResult, Readable, idf, readable_counts
from ..search_types import Candidate
from ..services import SearchServices

JOINT_WEIGHT = 0.5  # how much a candidate's coverage adds to its name-stripped cosine in rest_cover_joint


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


def term_weights(deps: SearchServices, result: LexicalResult, readable: Readable, mask: IndexMask,
                 name_terms: set[str]) -> tuple[dict[str, float], set[str]]:
    """Idf weight per key-term stem, from the readable records holding a word that starts with the
    stem (what "holding" means here), and the stems some readable record holds."""
    counts = {t["term"]: t["documents"] for t in result.terms}
    weights: dict[str, float] = {}
    held: set[str] = set()
    known: dict[str, int] | None = None
    for term in key_terms(list(counts), name_terms):
        key = prefix_stem(term)
        if key in weights:
            continue
        if known is None:
            # the readable counts cache of this readable set and store state (exact, never stale):
            # a stem's count is read once per store state, not once per search (on PostgreSQL a
            # common stem's count checks each of its postings against the filter)
            known = readable_counts(deps, readable, mask)
        documents = known.get(f"prefix:{key}")
        if documents is None:
            documents = known[f"prefix:{key}"] = readable_prefix_count(deps.store, key, readable)
        weights[key] = max(weights.get(key, 0.0), idf(result.total, documents))
        if documents:
            held.add(key)
    return weights, held


def rest_cover(deps: SearchServices, result: LexicalResult | None, readable: Readable, mask: IndexMask, name_terms: set[str],
               cands: list[Candidate], rest_cosines: dict[int, float]) -> RestCover:
    """The three word-level signals over ``cands``; their text is read here."""
    if result is None:
        return RestCover()
    weights, held = term_weights(deps, result, readable, mask, name_terms)
    total = sum(weights.values())
    if total <= 0:
        return RestCover(weights)
    out = RestCover(weights, held=round(sum(weights[s] for s in held) / total, 6))
    seqs = [c.seq for c in cands]
    if not seqs:
        return out
    texts = record_contents(deps.store, seqs)
    for seq in seqs:
        stems = prefix_stems(texts.get(seq) or "")
        out.per_candidate[seq] = round(sum(w for s, w in weights.items() if s in stems) / total, 6)
    out.cover = max(out.per_candidate.values())
    joints = [rest_cosines[s] + JOINT_WEIGHT * v for s, v in out.per_candidate.items() if s in rest_cosines]
    out.joint = round(max(joints), 6) if joints else None
    return out
