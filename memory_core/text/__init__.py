"""The one home of the text rules: what a word is, how it is folded and stemmed, the shared word
lists, search and statement terms, and the offline token estimate.

Lexical search, the gate, the claim comparison, the evidence check, extraction, forgetting and both
stores' full-text code import these; none keeps a copy. Foundation level: nothing here imports more
than the standard library. Where two callers need different rules (two folds, two stems, two sets
of negators), each rule is here once, named for what it does (:mod:`.fold`, :mod:`.stems`,
:mod:`.words`).
"""

from .fold import index_fold, normalise_alias, quote_fold, quote_in
from .stems import PREFIX_STEM_LETTERS, prefix_stem, prefix_stems, suffix_stem
from .terms import has_negation, meaningful_terms, query_mentions, query_terms, statement_words
from .token_count import count_tokens, truncate_to_tokens
from .words import (
    CLAIM_NEGATORS,
    FRAMING,
    INNER_APOSTROPHE_WORD,
    JOINED_IDENTIFIER,
    LETTER_LED_WORD,
    LETTERS_AND_DIGITS,
    MONTHS_AND_WEEKDAYS,
    NEGATORS,
    NUMBER,
    QUESTION_WORDS,
    SHAPING_WORDS,
    STATEMENT_WORD,
    STOP_WORDS,
    TIME_WORDS,
    TOKEN_PIECE,
    WORD_CHARACTERS,
    words,
)

__all__ = [
    "CLAIM_NEGATORS", "FRAMING", "INNER_APOSTROPHE_WORD", "JOINED_IDENTIFIER", "LETTER_LED_WORD", "LETTERS_AND_DIGITS",
    "MONTHS_AND_WEEKDAYS", "NEGATORS", "NUMBER", "PREFIX_STEM_LETTERS", "QUESTION_WORDS", "SHAPING_WORDS", "STATEMENT_WORD",
    "STOP_WORDS", "TIME_WORDS", "TOKEN_PIECE", "WORD_CHARACTERS", "count_tokens", "has_negation", "index_fold",
    "meaningful_terms", "normalise_alias", "prefix_stem", "prefix_stems", "query_mentions", "query_terms", "quote_fold",
    "quote_in", "statement_words", "suffix_stem", "truncate_to_tokens", "words",
]
