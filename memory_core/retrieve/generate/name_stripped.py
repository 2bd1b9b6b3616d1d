"""The question with its known names taken out, and the fusion's fourth list ordered by it.

"How does Alice like her answers formatted?" asked of a memory that knows Alice: the name makes
the query look like every record about Alice (to a dense model the name is a large part of a short
question). Whether the memory holds an answer depends on the rest, "how does like her answers
formatted?". For a query naming an entity whose entity list is full, that rest is embedded once
(through the query-vector cache) and the candidate pool ordered by its cosine joins the fusion;
the gate reuses the same cosines (gate/names.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ...settings import RetrievalSettings
from ...text import LETTERS_AND_DIGITS, STOP_WORDS
from ..search_types import Candidate
from ..services import SearchServices
from .candidates import COSINE_DIGITS


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
    words = LETTERS_AND_DIGITS.findall(name)
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
    if not any(w.casefold() not in STOP_WORDS for w in LETTERS_AND_DIGITS.findall(text)):
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


def rest_query(deps: SearchServices, settings: RetrievalSettings, query: str, entities: list[dict], query_vector: np.ndarray | None,
               names: list[str], seqs: list[int], known: RestQuery | None) -> RestQuery:
    """The name-stripped question and its cosines to ``seqs``: embedded once per search (``known``
    is the one made so far, reused when it is for the same names) and shared by the fusion's
    fourth list and the gate."""
    rest = known
    if rest is None or rest.names != tuple(names):
        text = strip_names(query, [e for e in entities if e["name"] in names])
        vector = None
        if text is not None and query_vector is not None:
            vector, _ = deps.query_vector(text, settings)
        rest = RestQuery(tuple(names), text, vector)
    missing = [seq for seq in seqs if seq not in rest.cosines]
    if rest.vector is not None and missing:
        sims = deps.index.similarity(rest.vector, missing)
        rest.cosines.update({seq: round(float(v), COSINE_DIGITS) for seq, v in sims.items()})
    return rest


def full_entity_names(settings: RetrievalSettings, query: str, entities: list[dict], entity_list: list[int]) -> list[str]:
    """Known names the query spells whose entity list is full (they link ``candidates_per_generator``
    or more readable records): the names that say nothing about which record answers."""
    if len(entity_list) < settings.candidates_per_generator:
        return []
    return known_names_in_query(query, entities)


def rest_list(deps: SearchServices, settings: RetrievalSettings, query: str, entities: list[dict], query_vector: np.ndarray | None,
              pool: dict[int, Candidate], entity_list: list[int]) -> tuple[list[int], RestQuery | None]:
    """The fusion's fourth list: the candidate pool ordered by cosine to the name-stripped question
    (empty unless the query names an entity with a full list and has other words), and the
    name-stripped question when one was made."""
    names = full_entity_names(settings, query, entities, entity_list) if settings.rest_list_in_fusion and pool else []
    if not names:
        return [], None
    rest = rest_query(deps, settings, query, entities, query_vector, names, list(pool), None)
    if rest.text is None:
        return [], rest
    order = sorted(rest.cosines, key=lambda seq: (-rest.cosines[seq], seq))[:settings.candidates_per_generator]
    for rank, seq in enumerate(order, start=1):
        pool[seq].rest_rank, pool[seq].rest_cosine = rank, rest.cosines[seq]
    return order, rest
