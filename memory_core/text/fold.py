"""Folding text before it is compared. Three folds, each named for the comparison it serves:

- :func:`index_fold` (one word): case and diacritics, as FTS5's ``unicode61`` tokenizer with
  ``remove_diacritics 2`` folds what it indexes; the PostgreSQL full-text tokens and the stems
  use it, so both stores hold the same words.
- :func:`quote_fold` (a text): case, runs of whitespace and typographic quotes; the quote locator
  (:func:`quote_in`) and the statement words compare with it.
- :func:`normalise_alias` (a name): case, runs of whitespace and surrounding punctuation; the key
  an entity alias is stored and looked up by.
"""

from __future__ import annotations

import unicodedata

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})


def index_fold(word: str) -> str:
    """Case-fold and strip diacritics, as FTS5's unicode61 with ``remove_diacritics 2`` does."""
    if word.isascii():  # the common case, and exactly the same result: no diacritics, casefold is lower
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def quote_fold(text: str) -> str:
    """Case-, whitespace- and quote-folded text, for verbatim matching."""
    return " ".join(text.translate(_QUOTES).casefold().split())


def quote_in(quote: str, text: str) -> bool:
    """The one quote locator: ``quote`` is a verbatim span of ``text`` after folding case,
    whitespace and typographic quotes, and nothing fuzzier."""
    needle = quote_fold(quote)
    return bool(needle) and (quote in text or needle in quote_fold(text))


def normalise_alias(text: str) -> str:
    """Alias matching key: case-folded, whitespace collapsed, surrounding punctuation dropped."""
    return " ".join(text.casefold().split()).strip(".,;:!?\"'()[]{}")
