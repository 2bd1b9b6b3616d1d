"""Turning untrusted query text into a safe FTS5 expression, and query n-grams for entity lookup.

FTS5's query language gives meaning to quotes, ``AND``/``OR``/``NOT``/``NEAR``, ``*``, ``^``,
``-``, ``+``, parentheses and ``column:`` filters. A user's text must never be read as any of
that. :func:`build_fts_query` therefore extracts plain word tokens itself (letters and digits;
everything else separates, as FTS5's unicode61 tokenizer does), drops stop words, and emits each
remaining term as a double-quoted string joined by ``OR``. Quoted strings are always literal
phrases to FTS5, so operator words and symbols in the query can only ever be searched for as
words. A whitespace-separated chunk such as ``PR-1234`` or ``v2.3.1`` that the tokenizer would
split keeps its parts together as one quoted phrase, so identifiers still match exactly.
"""

from __future__ import annotations

import re

from ..policy.rules import normalise_alias

# Letters and digits only: "_" and every other symbol separate tokens, as in unicode61.
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
# A chunk that joins word parts with one of these is an identifier ("PR-1234", "v2.3.1", "a_b").
_JOINED = re.compile(r"[^\W_][-_./:#@+][^\W_]", re.UNICODE)

STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been before being below
    between both but by can cannot could couldn did didn do does doesn doing don down during each else ever
    few for from further had hadn has hasn have haven having he her here hers herself him himself his how i
    if in into is isn it its itself just ll me might more most much must mustn my myself no nor not now of
    off on once only or other ought our ours ourselves out over own re same shall shan she should shouldn so
    some such than that the their theirs them themselves then there these they this those through to too
    under until up upon us ve very was wasn we were weren what when where which while who whom whose why will
    with won would wouldn yet you your yours yourself yourselves
    s t d m o y
    anything something everything nothing thing things remember recall tell know please any
    """.split()
)


def query_terms(text: str, max_terms: int = 16) -> list[str]:
    """Search terms of ``text`` in order: lower-cased words and joined identifiers, stop words out.

    Each term is either one word (``"sushi"``) or a space-separated phrase of the parts of an
    identifier (``"pr 1234"``). Duplicates are dropped; at most ``max_terms`` are kept.
    """
    terms: list[str] = []
    seen: set[str] = set()
    for chunk in text.split():
        tokens = [t.casefold() for t in _TOKEN.findall(chunk)]
        if not tokens:
            continue
        if len(tokens) > 1 and _JOINED.search(chunk):
            candidates = [" ".join(tokens)]
        else:
            candidates = [t for t in tokens if t not in STOP_WORDS]
        for term in candidates:
            if term not in seen:
                seen.add(term)
                terms.append(term)
                if len(terms) >= max_terms:
                    return terms
    return terms


def fts_expression(terms: list[str]) -> str | None:
    """``"a" OR "b c"``: each term a quoted FTS5 string (a literal phrase); None for no terms."""
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def build_fts_query(text: str, max_terms: int = 16) -> str | None:
    """A MATCH expression that finds records containing any term of ``text``; None if no terms."""
    return fts_expression(query_terms(text, max_terms))


_EDGE_PUNCT = ".,;:!?\"'()[]{}<>«»“”‘’`"


def query_mentions(text: str, max_ngram: int = 4, max_words: int = 64) -> list[str]:
    """Normalised word n-grams of ``text`` to look up as exact entity aliases.

    Words keep their inner punctuation ("O'Brien", "acme-corp") but lose surrounding punctuation
    and a possessive "'s". N-grams made only of stop words are skipped. The keys are normalised
    with :func:`normalise_alias`, the function aliases are stored with.
    """
    words = []
    for raw in text.split()[:max_words]:
        word = raw.strip(_EDGE_PUNCT)
        for suffix in ("'s", "’s"):
            if word.casefold().endswith(suffix) and len(word) > len(suffix):
                word = word[: -len(suffix)]
        if word:
            words.append(word)
    out: list[str] = []
    seen: set[str] = set()
    for n in range(1, max_ngram + 1):
        for start in range(0, len(words) - n + 1):
            gram = words[start : start + n]
            if all(w.casefold() in STOP_WORDS for w in gram):
                continue
            key = normalise_alias(" ".join(gram))
            if key and key not in seen:
                seen.add(key)
                out.append(key)
    return out
