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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from . import gate_model
from ..text import normalise_alias
from .rest_cover import rest_cover
from .fts_query import STOP_WORDS, query_terms
from .generators import COSINE_DIGITS
from .lexical import partial_score, unheld_names
from .scoring import GateFloors, NameRest, name_rest_check

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


@dataclass
class RestQuery:
    """The question with the known names taken out: its text (None when only names are left), its
    vector, and its cosine to each candidate examined so far (by sequence number)."""

    names: tuple[str, ...]
    text: str | None
    vector: np.ndarray | None
    cosines: dict[int, float] = field(default_factory=dict)


def rest_query(ctx: SearchContext, names: list[str], seqs: list[int]) -> RestQuery:
    """The name-stripped question and its cosines to ``seqs``: embedded once per search (through the
    query-vector cache) and shared by the fusion's fourth list and the gate."""
    cached = ctx.rest_query
    if cached is None or cached.names != tuple(names):
        text = strip_names(ctx.query, [e for e in ctx.entities if e["name"] in names])
        vector = None
        if text is not None and ctx.query_vec is not None:
            vector, _ = ctx.deps.query_vector(text, ctx.settings)
        cached = ctx.rest_query = RestQuery(tuple(names), text, vector)
    missing = [seq for seq in seqs if seq not in cached.cosines]
    if cached.vector is not None and missing:
        sims = ctx.deps.index.similarity(cached.vector, missing)
        cached.cosines.update({seq: round(float(v), COSINE_DIGITS) for seq, v in sims.items()})
    return cached


def full_entity_names(ctx: SearchContext) -> list[str]:
    """Known names the query spells whose entity list is full (they link ``candidates_per_generator``
    or more readable records): the names that say nothing about which record answers."""
    if len(ctx.generated.get("entity", [])) < ctx.settings.candidates_per_generator:
        return []
    return known_names_in_query(ctx.query, ctx.entities)


def rest_list(ctx: SearchContext) -> list[int]:
    """The fusion's fourth list: the candidate pool ordered by cosine to the name-stripped question
    (empty unless the query names an entity with a full list and has other words)."""
    names = full_entity_names(ctx) if ctx.settings.rest_list_in_fusion and ctx.pool else []
    if not names:
        return []
    rest = rest_query(ctx, names, list(ctx.pool))
    if rest.text is None:
        return []
    order = sorted(rest.cosines, key=lambda seq: (-rest.cosines[seq], seq))[:ctx.settings.candidates_per_generator]
    for rank, seq in enumerate(order, start=1):
        ctx.pool[seq].rest_rank, ctx.pool[seq].rest_cosine = rank, rest.cosines[seq]
    return order


def short_list_names(ctx: SearchContext) -> list[str]:
    """Known names the query spells whose entity list is short (fewer than ``candidates_per_generator``
    readable records), when the short-list rule is on: such a name still needs the rest of the
    question supported (scoring.short_list_check). A name the caller also gave as an entity hint is
    left out: the caller said the search is about that entity, so what is linked to it is on topic."""
    if not ctx.settings.short_list_names_need_rest or len(ctx.generated.get("entity", [])) >= ctx.settings.candidates_per_generator:
        return []
    hinted = {normalise_alias(h) for h in ctx.request.entity_hints}
    return [name for name in known_names_in_query(ctx.query, ctx.entities)
            if not hinted & {normalise_alias(key) for e in ctx.entities if e["name"] == name
                             for key in (e.get("matched") or "", e["name"], e.get("id") or "")}]


def name_rest(ctx: SearchContext, names: list[str], in_query: set[str], floors: GateFloors, every_signal: bool,
              short: bool = False) -> NameRest:
    """For a query naming known entities: the best support the rest of the question finds among
    the candidates. The lexical score on the other words is free; the name-stripped cosines come
    from the fusion's fourth list when it ran, else from one more embedding. Under the two-floor
    rule they are computed only when the lexical support does not already settle it; the
    known-name model, the short-list rule (``short``) and ``every_signal`` (calibration passes)
    need every signal."""
    lexical = None
    if ctx.lexical is not None:
        scores = [partial_score(ctx.lexical, c.lexical_terms, in_query) for c in ctx.ranking if c.lexical_terms]
        scores = [v for v in scores if v is not None]
        lexical = round(max(scores), 6) if scores else None
    full_cos = max((c.cosine for c in ctx.ranking if c.cosine is not None), default=None)
    full_lex = max((c.lexical for c in ctx.ranking if c.lexical is not None), default=None)
    unheld = tuple(unheld_names(ctx.query, ctx.lexical))
    model = floors.name_model_floor > -1.0 or short
    if not (every_signal or model) and lexical is not None and lexical >= floors.name_rest_lexical:
        return NameRest(tuple(names), None, lexical, full_cosine=full_cos, full_lexical=full_lex, unheld=unheld)
    joint = linked_to_all(ctx, names)
    if joint is not None and not every_signal:
        return NameRest(tuple(names), None, lexical, joint=joint, full_cosine=full_cos, full_lexical=full_lex, unheld=unheld,
                        short=short)
    if short and lexical is not None and lexical >= floors.entity_support_lexical and not every_signal:
        return NameRest(tuple(names), None, lexical, full_cosine=full_cos, full_lexical=full_lex, unheld=unheld, short=True)
    rest = rest_query(ctx, names, [c.seq for c in ctx.ranking])
    cosines = [(rest.cosines[c.seq], c.lexical) for c in ctx.ranking if c.seq in rest.cosines]
    cosine = max((v for v, _ in cosines), default=None)
    both = max((gate_model.rest_both(v, lex) for v, lex in cosines), default=None)
    words = rest_cover(ctx, in_query, ctx.ranking, rest.cosines) if model or every_signal else None
    ctx.rest_cover = words
    return NameRest(tuple(names), cosine, lexical, bare=rest.text is None, joint=joint,
                    both=None if both is None else round(both, 6), full_cosine=full_cos, full_lexical=full_lex, unheld=unheld,
                    cover=words.cover if words else None, cover_joint=words.joint if words else None,
                    held=words.held if words else None, short=short)


def probe_rest_supported(ctx: SearchContext, cands: list, floors: GateFloors) -> bool:
    """For the lifecycle probe: when the known-name check judged the question, would these older
    records (superseded or expired) have passed it too? True when the check did not judge it."""
    names = ctx.gate_summary.get("known_names") or []
    short = bool(ctx.gate_summary.get("known_names_short"))
    if not names and not full_entity_names(ctx):  # the gate refused before judging names: a short list still needs the rest
        names, short = short_list_names(ctx), True
    if not names or not (floors.name_rule_on or short):
        return True
    rest = rest_query(ctx, names, [c.seq for c in cands])
    in_query = {t for e in ctx.entities for key in (e.get("matched") or "", e["name"]) for t in query_terms(key, 64)}
    lexicals = [partial_score(ctx.lexical, c.lexical_terms, in_query) for c in cands if c.lexical_terms and ctx.lexical is not None]
    pairs = [(rest.cosines[c.seq], c.lexical) for c in cands if c.seq in rest.cosines]
    words = rest_cover(ctx, in_query, cands, rest.cosines) if floors.name_model_floor > -1.0 or short else None
    support = NameRest(tuple(names), max((v for v, _ in pairs), default=None), max((v for v in lexicals if v is not None), default=None),
                       bare=rest.text is None,
                       both=max((gate_model.rest_both(v, lex) for v, lex in pairs), default=None),
                       full_cosine=max((c.cosine for c in cands if c.cosine is not None), default=None),
                       full_lexical=max((c.lexical for c in cands if c.lexical is not None), default=None),
                       unheld=tuple(ctx.gate_summary.get("unheld_names") or ()),
                       cover=words.cover if words else None, cover_joint=words.joint if words else None,
                       held=words.held if words else None, short=short)
    return name_rest_check(support, floors)[0]


def linked_to_all(ctx: SearchContext, names: list[str]) -> str | None:
    """A candidate linked to every one of two or more named entities ("what did I discuss with Emeka
    about Helix?"): names that occur together are a specific match, not a mention. Its id, or None.

    Only a candidate that is strong on its own counts (its cosine or lexical score at its floor): a
    record that merely links both names and shares nothing else with the question ("When did Alice
    join Northwind?" against "The user leads product for Atlas here at Northwind") is two mentions,
    not an answer, and the rest of the question is judged as for one name."""
    name_of = {e["id"]: e["name"] for e in ctx.entities if e["name"] in names}  # a name may be several entities (scopes)
    s = ctx.settings
    strong = [c for c in ctx.ranking if (c.cosine is not None and c.cosine >= s.cosine_floor)
              or (c.lexical is not None and c.lexical >= s.lexical_floor)]
    if len(set(name_of.values())) < 2 or not strong:
        return None
    by_id = {c.record_id: c for c in strong}
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
