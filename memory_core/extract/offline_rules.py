"""Text handling of the offline extractor: sentences, clauses, vetoes, dates, third person.

A sentence becomes a candidate only when it passes every veto here (question, hedge or
hypothetical, negation, joke or sarcasm, reported speech, contrast, past habit) and matches one
of the first-person patterns in :mod:`.offline_patterns`. docs/extraction.md lists the rules and
what they miss.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text import has_negation

WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
_COUNT = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d{1,3})"
_DAYNUM = r"\d{1,2}(?:st|nd|rd|th)?"
_DATE_CORE = (
    rf"(?:next|this)\s+(?:week|month|year|{WEEKDAY})"
    r"|the\s+day\s+after\s+tomorrow|tomorrow|tonight|today"
    rf"|(?:in\s+)?{_COUNT}\s+(?:days?|weeks?|months?|years?)\s+from\s+now"
    rf"|in\s+{_COUNT}\s+(?:days?|weeks?|months?|years?)"
    rf"|{MONTH}\s+{_DAYNUM}(?:,?\s+\d{{4}})?"
    rf"|(?:the\s+)?{_DAYNUM}\s+(?:of\s+)?{MONTH}(?:\s+\d{{4}})?"
    r"|\d{4}-\d{2}-\d{2}"
    rf"|{WEEKDAY}"
)
_PREPOSITIONS = r"on|by|until|till|til|through|from|starting|since|before|after|as of|beginning"
# A bare month name needs a preposition, so the modal "may" is never read as May.
_TEMPORAL = re.compile(
    rf"\b(?:(?P<prep>{_PREPOSITIONS}|in|during)\s+)?(?P<date>{_DATE_CORE})\b"
    rf"|\b(?P<mprep>in|by|until|till|from|since|during|before|after|starting)\s+(?P<month>{MONTH}(?:\s+\d{{4}})?)\b",
    re.IGNORECASE,
)

_JOKE = re.compile(
    r"(?:\b(?:lol|lmao|rofl|ha(?:ha)+|he(?:he)+|jk|j/k|just kidding|kidding|joking|jokingly|sarcasm|sarcastic|yeah,? right|as if)\b"
    r"|\b(?:die|dying|dead|kill|killing|murder|scream|screaming)\b"
    r"|\boh,? (?:great|joy|wonderful|fantastic|perfect|sure|brilliant|lovely)\b|\b(?:thanks a lot|just what i needed|said no one|because that always works)\b"
    r"|/s\b|;\)|:p\b|\bxd\b|[\U0001F602\U0001F923\U0001F61C\U0001F609\U0001F643\U0001F605\U0001F92A])",
    re.IGNORECASE,
)
_RETRACTION = re.compile(
    r"^\W*(?:just kidding|jk|j/k|kidding|i was (?:just )?joking|that was a joke|never ?mind|scratch that|forget (?:that|what i said)"
    r"|ignore (?:that|what i said)|not really|nah|wait,? no|no wait)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|likely|might|could|would|should|if|unless|whether|suppose|supposing|imagine|imagining"
    r"|hypothetically|theoretically|in theory|assuming|let's say|say i|pretend|wish|hope|hoping|someday|one day|eventually"
    r"|i think|i guess|i suppose|i believe|i feel like|not sure|unsure|kind of|sort of|kinda|sorta|thinking about|thinking of"
    r"|considering|wondering|debating|tempted|in case|what if|either|depending|depends|seems|apparently|rumou?red|allegedly"
    r"|i'd|we'd|you'd|try|trying|see if|figure out|look into|let you know|get back to|to think|you know|i mean|pretty sure)\b",
    re.IGNORECASE,
)
_MODAL_MAY = re.compile(rf"\bmay\b(?!\s+{_DAYNUM}\b)", re.IGNORECASE)
_DATE_MAY = re.compile(rf"\b(?:in|by|until|till|from|since|during|before|after|starting|of)\s+may\b|\b{_DAYNUM}\s+(?:of\s+)?may\b", re.IGNORECASE)
_RATHER = re.compile(r"\b(?:i'd|i would|we'd|we would) rather\b", re.IGNORECASE)
_REPORTED = re.compile(
    r"\b(?:said|says|say|told|tells|tell me|thinks|thought|believes|according to|asked|asks|claims|claimed|mentioned|heard|reckons)\b|[\"\u201c\u201d]",
    re.IGNORECASE,
)
_CONTRAST = re.compile(r"\b(?:but|although|though|except|however|whereas|otherwise)\b", re.IGNORECASE)
_PAST_HABIT = re.compile(r"\b(?:used to|back when|when i was|in the past|formerly|anymore|any more)\b", re.IGNORECASE)
_QUESTION_START = re.compile(
    r"^(?:who|what|when|where|why|how|which|should|shall|could|would|can|do|does|did|is|are|am|will|have|has|was|were|any idea|any thoughts)\b",
    re.IGNORECASE,
)
_MARKERS = re.compile(
    r"^(?:(?:actually|correction|update|oops|wait|sorry,? i meant|i meant|to correct myself|oh|ok|okay|right|also|and|so|well|btw|by the way"
    r"|fyi|for context|for the record|just so you know|heads up|quick update|one more thing|to be clear|yes|yeah|sure|great|thanks|thank you"
    r"|reminder|as a reminder|note|ps|p\.s\.|agreed"
    r"|hi|hello|hey)\b[,:;.!\s-]*)+",
    re.IGNORECASE,
)
_CORRECTION = re.compile(r"^(?:actually|correction|update|oops|sorry,? i meant|i meant|to correct myself)\b", re.IGNORECASE)
# The one negated form the extractor takes: a plain dislike ("I don't like long meetings"); the
# negation stays in the content, so nothing is ever turned into its opposite.
NEGATED_LIKING = re.compile(
    r"^I\s+(?:really\s+|just\s+)?(?:don't|don’t|do not)\s+(?:really\s+)?(?:like|enjoy|love)\s+(?!(?:it|that|this|them|when|how|the way)\b)[\w-]+[^,;]*$",
    re.IGNORECASE)


def plain_dislike(body: str) -> bool:
    """"I don't like long meetings": one negation, on the liking verb, and nothing after it negated."""
    match = NEGATED_LIKING.match(body)
    if not match:
        return False
    rest = re.sub(r"^.*?\b(?:like|enjoy|love)\b", "", body, count=1, flags=re.IGNORECASE)
    return not has_negation(rest)


ADVERBS = r"(?:(?:really|strongly|generally|usually|always|mostly|definitely|absolutely|also|still|normally|typically|much|honestly|now|currently|just|actually)\s+)*"


@dataclass
class Span:
    start: int
    end: int
    text: str


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")


def split_sentences(text: str) -> list[Span]:
    """Sentences with their exact offsets, so evidence is always a verbatim slice.

    A sentence ends at . ! or ? followed by whitespace (so "example.com" and "3.5" stay whole)
    or at a line break.
    """
    spans: list[Span] = []
    cursor = 0
    for match in [*_SENTENCE_END.finditer(text), None]:
        end = match.start() if match else len(text)
        if match and match.group(0)[0] in "\"')]":
            end = match.start() + len(match.group(0).rstrip())
        piece = text[cursor:end]
        stripped = piece.strip()
        if stripped and re.search(r"\w", stripped):
            start = cursor + (len(piece) - len(piece.lstrip()))
            spans.append(Span(start, start + len(stripped), stripped))
        cursor = match.end() if match else len(text)
    return spans


def is_joke(text: str) -> bool:
    return bool(_JOKE.search(text))


def is_retraction(text: str) -> bool:
    return bool(_RETRACTION.search(text.strip()))


_PREAMBLE = re.compile(r"^[A-Za-z][A-Za-z' ]{0,30}:\s+(?=\S)")


def strip_markers(sentence: str) -> tuple[str, bool]:
    """Drop leading discourse markers ("Actually, ", "Oh and ") and a short preamble ending in a
    colon ("Before we start: "); report whether a marker was a correction."""
    correction = bool(_CORRECTION.match(sentence.strip()))
    body = _MARKERS.sub("", sentence.strip(), count=1).strip()
    body = _PREAMBLE.sub("", body, count=1).strip()
    body = _MARKERS.sub("", body, count=1).strip()
    return body, correction


def veto(sentence: str) -> str | None:
    """Why a sentence must not become a fact, or None if it may."""
    text = sentence.strip()
    body, _ = strip_markers(text)
    if text.endswith("?") or _QUESTION_START.match(body):
        return "question"
    if len(text) > 280:
        return "too long to be a plain statement"
    if is_joke(text):
        return "joke or sarcasm marker"
    without_rather = _RATHER.sub("rather", text)
    hedge = _HEDGE.search(without_rather)
    if hedge:
        return f"hedge, condition or hypothetical ('{hedge.group(0)}')"
    if _MODAL_MAY.search(_DATE_MAY.sub("", text)):
        return "hedge ('may')"
    if has_negation(text) and not plain_dislike(body):
        return "negation"
    if _REPORTED.search(text):
        return "reported speech or quotation"
    if _CONTRAST.search(text):
        return "contrast or exception (more than one claim)"
    if _PAST_HABIT.search(text):
        return "past habit, not a current fact"
    return None


def temporal_expressions(body: str) -> list[tuple[str | None, str]]:
    """(preposition, expression) pairs found in ``body``; expression includes its preposition."""
    found = []
    for match in _TEMPORAL.finditer(body):
        prep = (match.group("prep") or match.group("mprep") or "").lower() or None
        found.append((prep, match.group(0).strip()))
    return found


# -- third-person rewriting --------------------------------------------------------------------

_IRREGULAR = {"be": "is", "am": "is", "have": "has", "do": "does", "go": "goes"}


_UNCHANGED = frozenset(
    "can must will shall went got made took chose came left became began bought sold met spent found flew drove wrote ran won "
    "lost sent had did was were".split()
)


def third_singular(verb: str) -> str:
    """The verb after "I" for "the user": prefer → prefers; past tenses and modals unchanged."""
    low = verb.lower()
    if low in _UNCHANGED or (low.endswith("ed") and len(low) > 3):
        return verb
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


_PRONOUNS = [
    (r"\bI'm\b", "they're"), (r"\bI am\b", "they are"), (r"\bI've\b", "they've"), (r"\bI'll\b", "they'll"),
    (r"\bI'd\b", "they'd"), (r"\bI\b", "they"), (r"\bmyself\b", "themselves"), (r"\bmine\b", "theirs"),
    (r"\bmy\b", "their"), (r"\bme\b", "them"), (r"\byours\b", "the assistant's"), (r"\byour\b", "the assistant's"),
    (r"\byou\b", "the assistant"),
]


def rest_pronouns(text: str) -> str:
    """First- and second-person words after the subject, seen from outside: my → their, you → the assistant."""
    for pattern, repl in _PRONOUNS:
        text = re.sub(pattern, repl, text, flags=re.IGNORECASE if repl != "they" else 0)
    return text


def third_person(body: str) -> str:
    """"I prefer my answers short." → "The user prefers their answers short."."""
    text = body.strip().rstrip(".!")
    leads = [
        (r"^I(?:'m| am)\s+", "The user is "), (r"^I(?:'ve| have)\s+(?=\w+(?:ed|en|t)\b)", "The user has "),
        (r"^I(?:'ll| will)\s+", "The user will "), (r"^I was\s+", "The user was "),
        (r"^I(?:'d| would) rather\s+", "The user would rather "), (r"^My\s+", "The user's "),
        (r"^Let's\s+", "The user decided to "), (r"^Let us\s+", "The user decided to "),
    ]
    for pattern, repl in leads:
        match = re.match(pattern, text, re.IGNORECASE)
        if match:
            return repl + rest_pronouns(text[match.end():]) + "."
    match = re.match(rf"^I\s+({ADVERBS})([A-Za-z]+(?:n't|n’t)?)(?![\w'’])", text, re.IGNORECASE)
    if match:
        verb = match.group(2)
        verb = {"don't": "doesn't", "don’t": "doesn’t"}.get(verb.lower(), verb) if "n't" in verb or "n’t" in verb else third_singular(verb)
        return f"The user {match.group(1)}{verb}{rest_pronouns(text[match.end():])}."
    if re.match(r"^we\b", text, re.IGNORECASE):
        return f"The user said: {text[0].lower()}{text[1:]}."
    return "The user said: " + text + "."


def capitalised_mentions(text: str) -> list[str]:
    """Capitalised word runs in ``text`` (crude named-entity spotting, at most 3).

    Weekdays, months, pronouns and short all-caps words (GUI, API) are left out.
    """
    skip = re.compile(rf"^(?:I|I'm|The|A|An|My|We|{WEEKDAY}|{MONTH})$", re.IGNORECASE)
    names: list[str] = []
    for match in re.finditer(r"\b[A-Z][\w'&-]*(?:\s+[A-Z][\w'&-]*)*", text):
        words = [w.strip(".'") for w in match.group(0).split()]
        words = [w for w in words if not skip.match(w) and not re.fullmatch(r"[A-Z]{2,4}", w)]
        name = " ".join(words)
        if len(name) >= 2 and name not in names:
            names.append(name)
    return names[:3]


_CLAUSE_BREAK = re.compile(
    r"(?:[,;]\s+(?:(?:so|and|then|plus)\s+)?|(?P<conj>\s+and\s+))(?=(?:I|I'm|I've|I'll|I'd|my|My|please|Please|let's|Let's|we|We)\b)"
)
_FIRST_PERSON_START = re.compile(r"^(?:\W*)(?:I|I'm|I've|I'll|my)\b", re.IGNORECASE)


def split_clauses(span: Span) -> list[Span]:
    """Split a sentence before each comma-joined first-person clause ("I'm Alice, I lead Atlas")."""
    out: list[Span] = []
    cursor = 0
    for match in _CLAUSE_BREAK.finditer(span.text):
        piece = span.text[cursor:match.start()].strip()
        if piece and not strip_markers(piece)[0]:
            continue  # "Actually, I live in Porto": the marker stays with its clause
        if match.group("conj") and not _FIRST_PERSON_START.match(strip_markers(piece)[0]):
            continue  # "Bob and I decided" is one subject, not two clauses
        if piece:
            offset = span.text.index(piece, cursor)
            out.append(Span(span.start + offset, span.start + offset + len(piece), piece))
        cursor = match.end()
    piece = span.text[cursor:].strip()
    if piece:
        offset = span.text.index(piece, cursor)
        out.append(Span(span.start + offset, span.start + offset + len(piece), piece))
    return out


def as_third_person(quote: str) -> str | None:
    """A first-person quote read from outside ("I live in Oslo." → "The user lives in Oslo."), or
    None when it does not start in the first person. Used to check a quote against third-person
    content without tripping over verb endings."""
    body, _ = strip_markers(quote)
    if not re.match(r"^(?:I|I'm|I've|I'll|I'd|my)\b", body, re.IGNORECASE):
        return None
    return third_person(body)
