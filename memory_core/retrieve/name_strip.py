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

from .fts_query import STOP_WORDS

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
