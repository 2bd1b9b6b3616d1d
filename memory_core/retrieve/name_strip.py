"""The rest of a question once the known names are taken out of it.

"How does Alice like her answers formatted?" asked of a memory that knows Alice: the name makes
the query look like every record about Alice (to a dense model the name is a large part of a short
question). Whether the memory holds an answer depends on the rest, "how does like her answers
formatted?". The gate compares that rest with the candidates (one more query embedding, only for
queries that name a known entity) and refuses a result set whose only link to the question is the
name.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .fts_query import STOP_WORDS
from .generators import COSINE_DIGITS
from .lexical import partial_score
from .scoring import GateFloors, NameRest

if TYPE_CHECKING:
    from .pipeline import SearchContext

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def known_names_in_query(query: str, entities: list[dict]) -> list[str]:
    """The matched entities' names that the query text itself spells (hints do not count)."""
    out = []
    for e in entities:
        for key in (e.get("matched") or "", e.get("name") or ""):
            if key and _pattern(key).search(query):
                if e["name"] not in out:
                    out.append(e["name"])
                break
    return out


def _pattern(name: str) -> re.Pattern:
    words = _WORD.findall(name)
    body = r"[\W_]+".join(re.escape(w) for w in words) if words else re.escape(name)
    return re.compile(rf"(?<![^\W_]){body}(?:['’]s)?(?![^\W_])", re.IGNORECASE)


def strip_names(query: str, entities: list[dict]) -> str | None:
    """``query`` with every spelling of the matched entities' names (aliases as matched, canonical
    names, possessives) removed; None when nothing but names and stop words is left."""
    text = query
    keys = {k for e in entities for k in (e.get("matched") or "", e.get("name") or "") if k}
    for key in sorted(keys, key=len, reverse=True):  # longest first: "Alice Smith" before "Alice"
        text = _pattern(key).sub(" ", text)
    text = re.sub(r"\s+", " ", text).strip()
    if not any(w.casefold() not in STOP_WORDS for w in _WORD.findall(text)):
        return None
    return text


def name_rest(ctx: SearchContext, names: list[str], in_query: set[str], floors: GateFloors, every_signal: bool) -> NameRest:
    """For a query naming known entities: the best support the rest of the question finds among
    the candidates. The lexical score on the other words is free; the name-stripped query costs one
    more embedding (from the query-vector cache when seen), so it is computed only when the lexical
    support does not already settle it, or ``every_signal`` is set (calibration passes log both)."""
    lexical = None
    if ctx.lexical is not None:
        scores = [partial_score(ctx.lexical, c.lexical_terms, in_query) for c in ctx.ranking if c.lexical_terms]
        scores = [v for v in scores if v is not None]
        lexical = round(max(scores), 6) if scores else None
    if not every_signal and lexical is not None and lexical >= floors.name_rest_lexical:
        return NameRest(tuple(names), None, lexical)
    joint = linked_to_all(ctx, names)
    if joint is not None and not every_signal:
        return NameRest(tuple(names), None, lexical, joint=joint)
    rest_text = strip_names(ctx.query, [e for e in ctx.entities if e["name"] in names])
    cosine = None
    if rest_text is not None and ctx.query_vec is not None:
        vec, _ = ctx.deps.query_vector(rest_text, ctx.settings)
        sims = ctx.deps.index.similarity(vec, [c.seq for c in ctx.ranking])
        cosine = round(float(max(sims.values())), COSINE_DIGITS) if sims else None
    return NameRest(tuple(names), cosine, lexical, bare=rest_text is None, joint=joint)


def linked_to_all(ctx: SearchContext, names: list[str]) -> str | None:
    """A candidate linked to every one of two or more named entities ("what did I discuss with Emeka
    about Helix?"): names that occur together are a specific match, not a mention. Its id, or None."""
    name_of = {e["id"]: e["name"] for e in ctx.entities if e["name"] in names}  # a name may be several entities (scopes)
    if len(set(name_of.values())) < 2 or not ctx.ranking:
        return None
    by_id = {c.record_id: c for c in ctx.ranking}
    store = ctx.deps.store
    with store.lock:
        rows = store.conn.execute(
            f"SELECT record_id, entity_id FROM record_entities WHERE entity_id IN ({','.join('?' * len(name_of))}) "
            f"AND record_id IN ({','.join('?' * len(by_id))})", [*name_of, *by_id]).fetchall()
    linked: dict[str, set[str]] = {}
    for record_id, entity_id in rows:
        linked.setdefault(record_id, set()).add(name_of[entity_id])
    wanted = set(name_of.values())
    found = sorted((by_id[r] for r, held in linked.items() if held >= wanted), key=lambda c: c.fused_rank or 0)
    return found[0].record_id if found else None
