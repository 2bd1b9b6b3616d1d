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

from ..text import STOP_WORDS, query_mentions, query_terms  # noqa: F401 (the search terms' home is memory_core.text)


def fts_expression(terms: list[str]) -> str | None:
    """``"a" OR "b c"``: each term a quoted FTS5 string (a literal phrase); None for no terms."""
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def build_fts_query(text: str, max_terms: int = 16) -> str | None:
    """A MATCH expression that finds records containing any term of ``text``; None if no terms."""
    return fts_expression(query_terms(text, max_terms))
