"""Finding a forgotten memory's words in stored text, and scrubbing them (used by ``erasure``).

Two kinds of match. A *needle* is a whole text of the memory (content, evidence, a summary, an
entity name): a string that repeats it, case- and whitespace-folded, is part of the memory. The
*words* of a forgotten search query (a logged search that returned the record: its query is part
of the memory, docs/store.md) go further: every string of that log row holding one of them is
replaced, since a trace keeps the query in pieces (lexical terms, matched aliases, hints).
Values that name things rather than say them (ids, kinds, statuses, stage and generator names,
times) are never replaced, so a scrubbed row still decodes and rebuilds.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from ..store.erasure_queries import rows_like
from ..text import FRAMING, NEGATORS, statement_words as terms

MARKER = "[forgotten]"

# Keys whose string values are identifiers or fixed vocabulary written by the code, not text.
STRUCTURAL_KEYS = frozenset({
    "id", "record_id", "entity_id", "search_id", "session_id", "agent_id", "user_id", "settings_id", "replay_of",
    "decision_id", "lineage_id", "searches", "kept", "entities",
    "status", "type", "types", "kind", "role", "source_kind", "scope", "scopes", "statuses", "matched_by", "fused_lists",
    "method", "mode", "origin", "model", "version", "runtime", "cache", "waited_in", "floors", "lapsed_provisional",
    "rewrite_status", "topic", "decider",
    "at", "created_at", "expires_at", "event_at", "valid_from", "valid_until", "time_from", "time_to",
})
# The parts of a logged stage that are the code's own (its name, whether it ran, its time).
_STAGE_OWN = ("name", "status", "ms")


def contains_any(text: str | None, needles: list[str]) -> bool:
    """Whether ``text`` repeats any needle (case- and whitespace-folded)."""
    if not text:
        return False
    folded = " ".join(text.casefold().split())
    return any(" ".join(n.casefold().split()) in folded for n in needles)


def names_in(text: str | None, names: list[str]) -> list[str]:
    """The ``names`` that ``text`` holds as whole words ("Miso" in "a cat called Miso.", not in "Misoka")."""
    if not text:
        return []
    padded = f" {' '.join(terms(text))} "
    return [n for n in names if terms(n) and f" {' '.join(terms(n))} " in padded]


def span_pattern(text: str) -> re.Pattern[str] | None:
    """A pattern finding ``text`` in a turn: case-insensitive, any whitespace, either kind of quote mark."""
    words = text.split()
    if not words:
        return None
    parts = []
    for word in words:
        escaped = re.escape(word)
        escaped = escaped.replace("'", "['\u2018\u2019]").replace('"', '["\u201c\u201d]')
        parts.append(escaped)
    return re.compile(r"\s+".join(parts), re.IGNORECASE)


def like_rows(conn: sqlite3.Connection, table: str, keys: list[str], columns: list[str], needles: list[str]) -> list[sqlite3.Row]:
    """``keys`` and ``columns`` of the rows of ``table`` where any of ``columns`` contains any needle
    (a cheap LIKE prefilter in the store, then an exact check here)."""
    if not needles:
        return []
    # LIKE is case-insensitive for ASCII; the Python check below settles the rest. The most
    # selective word of each needle narrows the scan most.
    patterns = ["%" + like_escape(max(needle.split(), key=len)) + "%" for needle in needles]
    rows = rows_like(conn, table, [*keys, *columns], columns, patterns)
    return [row for row in rows if any(contains_any(row[c], needles) for c in columns)]


def like_escape(word: str) -> str:
    """``word`` with LIKE's wildcards and its escape character escaped (for ``ESCAPE '\\'``)."""
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def query_words(queries: list[str | None]) -> frozenset[str]:
    """The words of forgotten queries that carry meaning (folded; framing and negation words left out)."""
    return frozenset(w for q in queries if q for w in terms(q) if len(w) > 1 and w not in FRAMING and w not in NEGATORS)


def _holds_word(text: str, words: frozenset[str]) -> bool:
    return bool(words) and any(w in words for w in terms(text))


def scrub(value: Any, needles: list[str], record_ids: set[str], words: frozenset[str] = frozenset(), key: str | None = None) -> Any:
    """``value`` (parsed JSON) with every string repeating a needle, or holding one of ``words``,
    replaced by the marker (values under :data:`STRUCTURAL_KEYS` excepted), and the entity links
    of ``record_ids`` emptied."""
    if isinstance(value, str):
        if key in STRUCTURAL_KEYS:
            return value
        return MARKER if contains_any(value, needles) or _holds_word(value, words) else value
    if isinstance(value, list):
        return [scrub(item, needles, record_ids, words, key) for item in value]
    if isinstance(value, dict):
        out = {k: scrub(item, needles, record_ids, words, k) for k, item in value.items()}
        if out.get("record_id") in record_ids and "entity_links" in out:
            out["entity_links"] = []
        return out
    return value


def scrub_trace(trace: Any, needles: list[str], record_ids: set[str], words: frozenset[str]) -> Any:
    """A logged search trace scrubbed as :func:`scrub` does, keeping each stage's name, status and time."""
    if not isinstance(trace, dict):
        return scrub(trace, needles, record_ids, words)
    out = {}
    for key, value in trace.items():
        if key == "stages" and isinstance(value, list):
            out[key] = [{k: (v if k in _STAGE_OWN else scrub(v, needles, record_ids, words, k)) for k, v in stage.items()}
                        if isinstance(stage, dict) else stage for stage in value]
        else:
            out[key] = scrub(value, needles, record_ids, words, key)
    return out
