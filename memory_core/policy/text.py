"""Text folding, crude stemming, negation and quote location shared by the write path and extraction.

One place for the rules that decide whether a quote is "in" a turn and which words carry a
statement's meaning, so the write path, the extraction validator and the claim comparison agree.
Pure functions over strings.
"""

from __future__ import annotations

import re

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})
_WORD = re.compile(r"[\w']+", re.UNICODE)
NUMBER = re.compile(r"\d+(?:[.,]\d+)?")

NEGATORS = frozenset(
    "not no never none nobody nothing neither nor without cannot can't won't don't doesn't didn't "
    "isn't aren't wasn't weren't shouldn't wouldn't couldn't hasn't haven't hadn't dont doesnt didnt "
    "isnt arent wont cant".split()
)
# Words that frame a statement about the user rather than carry its meaning.
FRAMING = frozenset(
    "user user's users i i'm im me my mine myself we our us you your the a an and or of to in on at for with "
    "is are was were be been being am has have had do does did will would shall should can could may might "
    "that this these those it its it's there their they them he she his her him said says say told tell "
    "prefer prefers preferred preference like likes liked want wants wanted wish really just also "
    "please currently now".split()
)


def fold(text: str) -> str:
    """Case-, whitespace- and quote-folded text used for verbatim matching."""
    return " ".join(text.translate(_QUOTES).casefold().split())


def stem(word: str) -> str:
    """A deliberately crude stemmer: enough to match 'lives', 'lived', 'living' and 'live'.

    Inflectional suffixes come off, then a final silent 'e', so every form of a verb meets at
    the same stem ('liv'); it only has to be consistent, never pretty.
    """
    base = word
    if len(word) > 4 and word.endswith(("ies", "ied")):
        base = word[:-3] + "y"
    elif len(word) > 5 and word.endswith("ingly"):
        base = word[:-5]
    elif len(word) > 4 and word.endswith("ing"):
        base = word[:-3]
    elif len(word) > 3 and word.endswith("ed"):
        base = word[:-2]
    elif len(word) > 3 and word.endswith("ly"):
        base = word[:-2]
    elif len(word) > 3 and word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        base = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        base = word[:-1]
    if len(base) > 3 and base.endswith("e"):
        base = base[:-1]
    return base


def terms(text: str) -> list[str]:
    words = [w.strip("'") for w in _WORD.findall(fold(text))]
    return [w for w in words if w]


def meaningful_terms(text: str) -> set[str]:
    return {stem(w) for w in terms(text) if w not in FRAMING and w not in NEGATORS}


def has_negation(text: str) -> bool:
    words = terms(text)
    return any(w in NEGATORS or w.endswith("n't") for w in words)


def quote_in(quote: str, text: str) -> bool:
    """The one quote locator: ``quote`` is a verbatim span of ``text`` after folding case,
    whitespace and typographic quotes, and nothing fuzzier."""
    needle = fold(quote)
    return bool(needle) and (quote in text or needle in fold(text))
