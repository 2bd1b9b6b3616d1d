"""What a word is, and the shared word lists.

Several rules split text into words, on purpose differently; each is named here for what it keeps,
so a caller picks the rule it means instead of writing its own pattern:

- :data:`LETTERS_AND_DIGITS`: runs of letters and digits; everything else (``_`` included)
  separates. FTS5's ``unicode61`` tokenizer splits this way, and so do the lexical search terms,
  the PostgreSQL full-text tokens, the name rules of the gate and the stem rules.
- :data:`STATEMENT_WORD`: word characters and apostrophes (``don't``, ``user's``), digits and
  ``_`` included: the words a statement is compared by (quotes, claims, negation).
- :data:`LETTER_LED_WORD`: a letter, then word characters, apostrophes and hyphens (``O'Brien``,
  ``stand-up``): the words the claim comparison checks for names and wording.
- :data:`INNER_APOSTROPHE_WORD`: a letter/digit run with at most one inner apostrophe
  (``user's``, ``don't``): host memory's gap rules.
- :data:`WORD_CHARACTERS`: Python's ``\\w+`` (``_`` joins): the hashing embedder's features.
- :data:`TOKEN_PIECE`: a letter/digit run, or one other non-space character: what the token
  estimate counts (:mod:`.token_count`).
"""

from __future__ import annotations

import re

LETTERS_AND_DIGITS = re.compile(r"[^\W_]+", re.UNICODE)
STATEMENT_WORD = re.compile(r"[\w']+", re.UNICODE)
LETTER_LED_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)
INNER_APOSTROPHE_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
WORD_CHARACTERS = re.compile(r"\w+", re.UNICODE)
TOKEN_PIECE = re.compile(r"[^\W_]+|[^\w\s]|_", re.UNICODE)
# A chunk that joins word parts with one of these is an identifier ("PR-1234", "v2.3.1", "a_b").
JOINED_IDENTIFIER = re.compile(r"[^\W_][-_./:#@+][^\W_]", re.UNICODE)
NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def words(text: str | None) -> list[str]:
    """The letter/digit runs of ``text`` in order (:data:`LETTERS_AND_DIGITS`), case kept."""
    return LETTERS_AND_DIGITS.findall(text or "")


# English stop words plus the fillers of a memory query ("remember", "tell", "anything"): left out
# of lexical search terms, and never a name or the rest of a question.
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

# Words that negate a statement (the evidence check, extraction's polarity, forgetting's key words).
NEGATORS = frozenset(
    "not no never none nobody nothing neither nor without cannot can't won't don't doesn't didn't "
    "isn't aren't wasn't weren't shouldn't wouldn't couldn't hasn't haven't hadn't dont doesnt didnt "
    "isnt arent wont cant".split()
)
# The claim comparison also reads "longer" as a negator ("no longer lives in Porto").
CLAIM_NEGATORS = NEGATORS | {"longer"}

# Words that frame a statement about the user rather than carry its meaning.
FRAMING = frozenset(
    "user user's users i i'm im me my mine myself we our us you your the a an and or of to in on at for with "
    "is are was were be been being am has have had do does did will would shall should can could may might "
    "that this these those it its it's there their they them he she his her him said says say told tell "
    "prefer prefers preferred preference like likes liked want wants wanted wish really just also "
    "please currently now".split()
)

# Months and weekdays: capitalised words that name a time, not a thing (the gate's name rules).
MONTHS_AND_WEEKDAYS = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)
# Every word of a date or a span of time a question may carry.
TIME_WORDS = MONTHS_AND_WEEKDAYS | frozenset(
    "today yesterday tomorrow week weeks weekend month months year years day days ago last next before after since".split()
)
# Words that shape a question without naming what it is about ("what kind of", "how often").
QUESTION_WORDS = frozenset(
    "kind type sort many much often long time times recently recent new first one two three favorite favourite".split()
)
# The two together: what the rest of a question is *not* about (the gate's rest cover, the label check).
SHAPING_WORDS = QUESTION_WORDS | TIME_WORDS
