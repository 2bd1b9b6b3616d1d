"""Terms: the words a search looks for, and the words a statement is compared by.

Search side. :func:`query_terms` gives the lexical search its terms (letter/digit runs, case-folded,
stop words out; an identifier such as ``PR-1234`` stays one phrase term ``"pr 1234"``), and
:func:`query_mentions` the n-grams the entity search looks up as aliases. Operator syntax in the
user's text (quotes, ``AND``/``OR``/``NEAR``, ``*``, ``column:``) never survives as anything but
words: the store quotes every term as a literal phrase.

Statement side. :func:`statement_words` are the quote-folded words of a statement;
:func:`meaningful_terms` their suffix stems without framing and negators; :func:`has_negation`
whether the statement negates.
"""

from __future__ import annotations

from .fold import normalise_alias, quote_fold
from .stems import suffix_stem
from .words import FRAMING, JOINED_IDENTIFIER, LETTERS_AND_DIGITS, NEGATORS, STATEMENT_WORD, STOP_WORDS

_EDGE_PUNCT = ".,;:!?\"'()[]{}<>«»“”‘’`"


def query_terms(text: str, max_terms: int = 16) -> list[str]:
    """Search terms of ``text`` in order: lower-cased words and joined identifiers, stop words out.

    Each term is either one word (``"sushi"``) or a space-separated phrase of the parts of an
    identifier (``"pr 1234"``). Duplicates are dropped; at most ``max_terms`` are kept.
    """
    terms: list[str] = []
    seen: set[str] = set()
    for chunk in text.split():
        tokens = [t.casefold() for t in LETTERS_AND_DIGITS.findall(chunk)]
        if not tokens:
            continue
        if len(tokens) > 1 and JOINED_IDENTIFIER.search(chunk):
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


def query_mentions(text: str, max_ngram: int = 4, max_words: int = 64) -> list[str]:
    """Normalised word n-grams of ``text`` to look up as exact entity aliases.

    Words keep their inner punctuation ("O'Brien", "acme-corp") but lose surrounding punctuation
    and a possessive "'s". N-grams made only of stop words are skipped. The keys are normalised
    with :func:`~.fold.normalise_alias`, the function aliases are stored with.
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


def statement_words(text: str) -> list[str]:
    """The words of the quote-folded text (:data:`~.words.STATEMENT_WORD`), edge apostrophes off."""
    words = [w.strip("'") for w in STATEMENT_WORD.findall(quote_fold(text))]
    return [w for w in words if w]


def meaningful_terms(text: str) -> set[str]:
    """Suffix stems of the words that carry a statement's meaning (framing and negators left out)."""
    return {suffix_stem(w) for w in statement_words(text) if w not in FRAMING and w not in NEGATORS}


def has_negation(text: str) -> bool:
    """Does the statement negate (a negator, or any ``n't`` word)?"""
    return any(w in NEGATORS or w.endswith("n't") for w in statement_words(text))
