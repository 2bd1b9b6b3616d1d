"""Two crude stemmers, on purpose different; neither needs a language model.

- :func:`suffix_stem` strips inflectional suffixes so every form of a verb meets at one stem
  ("lives", "lived", "living", "live" -> "liv"): the claim comparison and the evidence check
  compare statements with it.
- :func:`prefix_stem` keeps a word's first five letters (index-folded): the gate's rest cover
  matches a question's key terms to the words of records with it, and a full-text prefix query
  (FTS5 ``"stem"*``, a ``stem:*`` tsquery) finds the records holding it.
"""

from __future__ import annotations

from .fold import index_fold
from .words import LETTERS_AND_DIGITS

PREFIX_STEM_LETTERS = 5


def suffix_stem(word: str) -> str:
    """Inflectional suffixes off, then a final silent 'e': consistent, never pretty."""
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


def prefix_stem(word: str) -> str:
    """A word's first five letters, case- and diacritic-folded as the full-text index folds words
    (the whole word when shorter)."""
    return index_fold(word)[:PREFIX_STEM_LETTERS]


def prefix_stems(text: str | None) -> set[str]:
    """Every prefix of three to five letters of every word of ``text`` (and each shorter word): a
    key term's :func:`prefix_stem` is in this set exactly when some word of the text starts with it."""
    out = set()
    for word in LETTERS_AND_DIGITS.findall(text or ""):
        key = index_fold(word)
        out.add(key[:PREFIX_STEM_LETTERS])
        out.update(key[:k] for k in range(3, min(len(key), PREFIX_STEM_LETTERS)))
    return out
