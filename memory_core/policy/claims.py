"""Do two statements make the same claim? The values they state decide it, not their embeddings.

Near-duplicate detection by cosine alone folds "rent is $1,200" into "rent is $1,450": the
sentences differ in one token, the embeddings hardly at all. This module pulls the values a
statement commits to out of its text and compares them:

- dates (ISO, "April 10", "10 April 2026", "10/04/2026"), normalised; a date without a year
  matches the same day of any year;
- times of day ("9:00", "9:30 pm", "9am"), normalised to 24-hour HH:MM;
- amounts with a currency or unit ("$1,200", "1200 dollars", "50 mg", "3 km"), normalised;
- identifiers: e-mail addresses, URLs, IP addresses, phone numbers, UTC offsets, codes mixing
  letters and digits ("TP 1234", "zq1x0", "v2.3");
- other numbers, with number words up to twelve read as digits;
- names: capitalised words (compared case-folded; a name the other side also contains in lower
  case is not a difference);
- polarity: negation and the direction of a sentiment verb (love/like/enjoy vs hate/dislike).

Two statements are the same claim only when no value of any kind differs, their polarity agrees
and no content word was *replaced* (a word only the old statement has and one only the new one
has, after stemming and a small synonym table: "prefers tea" vs "prefers coffee"). A value
present on one side only counts as a difference: folding "lives in Berlin, Germany" into "lives
in Berlin" would drop a fact. Words only added ("stand-up meeting") are a refinement, reported in
``added_terms``. Pure functions, no store access.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..text import CLAIM_NEGATORS, FRAMING, LETTER_LED_WORD, statement_words, suffix_stem

MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
    "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1, "feb": 2, "mar": 3, "apr": 4,
    "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}
NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a dozen": 12, "twice": 2, "once": 1,
}
CURRENCIES = {
    "$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD", "us$": "USD",
    "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR",
    "£": "GBP", "gbp": "GBP", "pound": "GBP", "pounds": "GBP",
    "¥": "JPY", "jpy": "JPY", "yen": "JPY", "chf": "CHF", "francs": "CHF", "cad": "CAD", "aud": "AUD",
}
UNITS = {
    "mg": "mg", "milligram": "mg", "milligrams": "mg", "g": "g", "gram": "g", "grams": "g", "kg": "kg",
    "kilo": "kg", "kilos": "kg", "kilogram": "kg", "kilograms": "kg", "lb": "lb", "lbs": "lb", "pounds-weight": "lb",
    "ml": "ml", "l": "l", "litre": "l", "liter": "l", "litres": "l", "liters": "l",
    "km": "km", "kilometre": "km", "kilometer": "km", "kilometres": "km", "kilometers": "km", "mi": "mi",
    "mile": "mi", "miles": "mi", "m": "m", "metre": "m", "meter": "m", "metres": "m", "meters": "m", "cm": "cm",
    "%": "%", "percent": "%", "per cent": "%", "mb": "MB", "gb": "GB", "tb": "TB", "kb": "KB",
    "ms": "ms", "s": "s", "sec": "s", "seconds": "s", "second": "s", "min": "min", "mins": "min", "minute": "min",
    "minutes": "min", "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "day": "day", "days": "day",
    "week": "week", "weeks": "week", "month": "month", "months": "month", "year": "year", "years": "year",
    "mph": "mph", "kmh": "km/h", "km/h": "km/h", "cups": "cup", "cup": "cup", "times": "times", "x": "times",
    "°c": "°C", "°f": "°F", "degrees": "deg", "k": "thousand",
}
# Sentiment verbs: the direction of a stated liking.
POSITIVE = frozenset("like likes liked love loves loved enjoy enjoys enjoyed adore adores adored prefer prefers preferred fond".split())
NEGATIVE = frozenset("hate hates hated dislike dislikes disliked detest detests detested loathe loathes loathed despise despises despised".split())
# Capitalised words that are not names (sentence openers, pronouns, framing).
NOT_NAMES = frozenset(
    "the a an i i'm i've i'll i'd my mine me we our us you your he she his her they their them it its this that these those "
    "user user's users assistant agent and or but so if on in at to of for from with by as is are was were be "
    "monday tuesday wednesday thursday friday saturday sunday please also actually yes no ok okay hi hello hey "
    "utc gmt am pm".split()
) | frozenset(MONTHS)

# Words that change no claim ("again", "still") and predicate words that say the same thing in
# another way. Deliberately small: a pair it does not know counts as a change of wording, and a
# change of wording on the same subject supersedes (nothing is lost), it does not reinforce.
FILLER = frozenset("again still now currently really very just also actually anymore today right indeed number".split())
_SYNONYM_GROUPS = [
    ("live", "live lives living lived liv reside resides resid based bas located locat home"),
    ("work", "work works working employed employ employer job"),
    ("manager", "manager boss supervisor"),
    ("call", "call called named name"),
    ("email", "email e-mail mail"),
    ("birth", "birthday born birth"),
    ("child", "kid kids child children"),
    ("favourite", "favourite favorite favourit favorit"),
    ("start", "start starts begin begins"),
    ("weigh", "weigh weighs weight"),
    ("earn", "earn earns salary paid pay pays make makes"),
    ("flight", "flight flights fly flies fli flying"),
    ("timezone", "timezone zone time"),
    ("expire", "expiry expir expires expire expired expiration"),
    ("duration", "length last lasts long duration"),
]
SYNONYMS = {word: canonical for canonical, words in _SYNONYM_GROUPS for word in words.split()}

_MONTH = r"(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CURRENCY_PREFIX = r"(?:us\$|\$|€|£|¥|usd|eur|gbp|chf|cad|aud|jpy)"
_UNIT_WORDS = "|".join(sorted((re.escape(u) for u in UNITS), key=len, reverse=True))
_CURRENCY_WORDS = "|".join(sorted((re.escape(c) for c in CURRENCIES if c.isalpha()), key=len, reverse=True))

# Order matters: earlier kinds claim their span first, so a date's digits are not also a number.
_PATTERNS: list[tuple[str, re.Pattern]] = [
    ("identifier", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),  # e-mail
    ("identifier", re.compile(r"\bhttps?://\S+|\bwww\.\S+", re.I)),  # URL
    ("identifier", re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b")),  # IPv4
    ("identifier", re.compile(r"\b(?:[0-9a-f]{1,4}:){2,7}[0-9a-f]{1,4}\b", re.I)),  # IPv6
    ("identifier", re.compile(r"\b(?:utc|gmt)\s?[+\-−]\s?\d{1,2}(?::?\d{2})?\b", re.I)),  # UTC offset
    ("date", re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b")),
    ("date", re.compile(r"\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b")),
    ("date", re.compile(rf"\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b", re.I)),
    ("date", re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}})?\b", re.I)),
    ("date", re.compile(rf"\b{_MONTH}\s+\d{{4}}\b", re.I)),
    ("time", re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?(?=\W|$)", re.I)),
    ("time", re.compile(r"\b\d{1,2}\s*[ap]\.?m\.?(?=\W|$)", re.I)),
    ("time", re.compile(r"\b(?:noon|midday|midnight)\b", re.I)),
    ("identifier", re.compile(r"(?<![\w.])\+?\(?\d{1,4}\)?(?:[\s.-]\(?\d{2,5}\)?){1,4}(?!\w|\.\d)")),  # phone-like groups
    ("amount", re.compile(rf"(?<!\w){_CURRENCY_PREFIX}\s?(?:{_NUM})(?:\s?(?:k|m|bn)\b)?", re.I)),
    ("amount", re.compile(rf"\b(?:{_NUM})\s?(?:{_CURRENCY_WORDS})\b", re.I)),
    ("amount", re.compile(rf"(?<![\w.])(?:{_NUM})\s?(?:{_UNIT_WORDS})(?=\W|$)", re.I)),
    ("identifier", re.compile(r"\b(?:[A-Z]{1,4}[\s-]?\d{2,6}|[A-Za-z]{1,4}\d{2,6})[A-Za-z]?\b")),  # codes: TP 1234, A320
    ("identifier", re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{2,}\b")),  # mixed letters and digits: zq1x0, 4B
    ("number", re.compile(rf"(?<![\w.]){_NUM}(?![\w.]\d)")),
]
_NUMBER_WORD = re.compile(r"\b(?:" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")\b", re.I)


@dataclass(frozen=True)
class Value:
    """One value a statement commits to: its kind, normalised form and the text it came from."""

    kind: str
    norm: str
    text: str


@dataclass
class Comparison:
    """Whether two statements state the same claim, and if not, what differs."""

    same: bool
    differences: list[str] = field(default_factory=list)
    added_terms: list[str] = field(default_factory=list)  # words only the new statement has (a refinement)

    def to_dict(self) -> dict:
        return {"same": self.same, "differences": list(self.differences), "added_terms": list(self.added_terms)}


def _number(text: str) -> str:
    cleaned = text.replace(",", "")
    try:
        value = float(cleaned)
    except ValueError:
        return cleaned
    return str(int(value)) if value == int(value) else repr(value)


def _norm_date(text: str) -> str:
    low = text.casefold().replace(",", " ")
    iso = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", low.strip())
    if iso:
        return f"{int(iso[1]):04d}-{int(iso[2]):02d}-{int(iso[3]):02d}"
    numeric = re.fullmatch(r"(\d{1,2})[/.](\d{1,2})[/.](\d{2,4})", low.strip())
    if numeric:  # day-first unless the first part cannot be a day-of-month pair that way
        a, b, year = int(numeric[1]), int(numeric[2]), int(numeric[3])
        year = year + 2000 if year < 100 else year
        day, month = (a, b) if b <= 12 else (b, a)
        return f"{year:04d}-{month:02d}-{day:02d}"
    month = next((MONTHS[w.rstrip(".")] for w in low.split() if w.rstrip(".") in MONTHS), None)
    digits = re.findall(r"\d+", low)
    year = next((int(d) for d in digits if len(d) == 4), None)
    day = next((int(d) for d in digits if len(d) <= 2), None)
    year_text = f"{year:04d}" if year else "????"
    day_text = f"{day:02d}" if day else "??"
    return f"{year_text}-{month or 0:02d}-{day_text}"


def _norm_time(text: str) -> str:
    low = text.casefold().replace(".", "").replace(" ", "")
    if low in ("noon", "midday"):
        return "12:00"
    if low == "midnight":
        return "00:00"
    match = re.match(r"(\d{1,2})(?::(\d{2}))?(?::\d{2})?([ap]m)?", low)
    if not match:
        return low
    hour, minute, half = int(match[1]), int(match[2] or 0), match[3]
    if half == "pm" and hour < 12:
        hour += 12
    if half == "am" and hour == 12:
        hour = 0
    return f"{hour:02d}:{minute:02d}"


def _norm_amount(text: str) -> str:
    low = text.casefold().strip()
    number = re.search(_NUM, low)
    if not number:
        return low
    value = _number(number.group())
    rest = (low[: number.start()] + " " + low[number.end():]).strip()
    multiplier = {"k": 1_000, "m": 1_000_000, "bn": 1_000_000_000}
    unit = ""
    for token in rest.split():
        token = token.strip()
        if token in CURRENCIES:
            unit = CURRENCIES[token] + unit
        elif token in multiplier and unit in CURRENCIES.values():
            value = _number(str(float(value) * multiplier[token]))
        elif token in UNITS:
            unit = unit + UNITS[token]
    for symbol in ("us$", "$", "€", "£", "¥"):
        if rest.startswith(symbol):
            unit = CURRENCIES[symbol]
            break
    return f"{unit} {value}".strip()


def _norm_identifier(text: str) -> str:
    low = text.casefold().replace("−", "-")
    if "@" in low or "://" in low or low.startswith("www."):
        return low.rstrip(".,;")
    return re.sub(r"[\s().-]+", "", low)  # "TP 1234" = "TP1234", "555-0143" = "555 0143"


_NORMALISERS = {"date": _norm_date, "time": _norm_time, "amount": _norm_amount, "identifier": _norm_identifier, "number": _number}


def _scan(text: str) -> tuple[list[Value], str]:
    """The values in ``text`` (spans never overlap) and the text with those spans blanked."""
    taken: list[tuple[int, int]] = []
    values: list[Value] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if start == end or any(start < e and s < end for s, e in taken):
                continue
            raw = match.group().strip()
            if kind == "identifier" and pattern.pattern.startswith(r"(?<![\w.])\+?") and sum(c.isdigit() for c in raw) < 6:
                continue  # "12 34" is two numbers, not a phone number
            taken.append((start, end))
            values.append(Value(kind, _NORMALISERS[kind](raw), raw))
    for match in _NUMBER_WORD.finditer(text):
        if not any(match.start() < e and s < match.end() for s, e in taken):
            taken.append(match.span())
            values.append(Value("number", str(NUMBER_WORDS[match.group().casefold()]), match.group()))
    residue = list(text)
    for start, end in taken:
        residue[start:end] = " " * (end - start)
    return values, "".join(residue)


def extract_values(text: str) -> list[Value]:
    """Every value the text states (dates, times, amounts, identifiers, numbers)."""
    return _scan(text)[0]


def _key(word: str) -> str:
    """How a word is compared: apostrophes unified, edge punctuation dropped, case-folded, no 's."""
    return word.replace("’", "'").strip("'-").casefold().removesuffix("'s")


def names(text: str) -> set[str]:
    """Capitalised words that are not sentence framing, case-folded."""
    found = set()
    for word in LETTER_LED_WORD.findall(text):
        clean = word.replace("’", "'").strip("'-")
        if clean[:1].isupper() and _key(clean) not in NOT_NAMES:
            found.add(_key(clean))
    return found


def polarity(text: str) -> int:
    """+1 for an affirmed or liked statement, -1 for a negated or disliked one."""
    words = [w.casefold().replace("’", "'") for w in LETTER_LED_WORD.findall(text)]
    sign = 1
    if any(w in CLAIM_NEGATORS or w.endswith("n't") for w in words):
        sign = -sign
    if any(w in NEGATIVE for w in words):
        sign = -sign
    return sign


def _dates_match(a: str, b: str) -> bool:
    return all(x == y or "?" in x or "?" in y for x, y in zip(a.split("-"), b.split("-")))


def compare_claims(new: str, old: str, subject_words: set[str] | frozenset[str] = frozenset()) -> Comparison:
    """Same claim when no stated value differs and polarity agrees (see the module docstring).

    ``subject_words`` (the words of the shared attribute, e.g. ``passport``, ``expiry``) name what
    the claim is about, not its value, so dropping or adding them is not a change of wording.
    """
    differences: list[str] = []
    if polarity(new) != polarity(old):
        differences.append("polarity: one statement affirms what the other negates")
    (new_values, new_rest), (old_values, old_rest) = _scan(new), _scan(old)
    for kind in ("date", "time", "amount", "identifier", "number"):
        mine = sorted({v.norm for v in new_values if v.kind == kind})
        theirs = sorted({v.norm for v in old_values if v.kind == kind})
        if kind == "date":
            only_new = [d for d in mine if not any(_dates_match(d, o) for o in theirs)]
            only_old = [o for o in theirs if not any(_dates_match(o, d) for d in mine)]
        else:
            only_new = [v for v in mine if v not in theirs]
            only_old = [v for v in theirs if v not in mine]
        if only_new or only_old:
            differences.append(f"{kind}: {', '.join(only_old) or '(none)'} -> {', '.join(only_new) or '(none)'}")
    new_words = {_key(w) for w in LETTER_LED_WORD.findall(new_rest)}
    old_words = {_key(w) for w in LETTER_LED_WORD.findall(old_rest)}
    new_names, old_names = names(new_rest), names(old_rest)
    only_new_names = sorted(n for n in new_names if n not in old_words)
    only_old_names = sorted(n for n in old_names if n not in new_words)
    if only_new_names or only_old_names:
        differences.append(f"name: {', '.join(only_old_names) or '(none)'} -> {', '.join(only_new_names) or '(none)'}")
    skip = new_names | old_names | {w.casefold() for w in subject_words} | {suffix_stem(w.casefold()) for w in subject_words}
    added, removed = term_change(new_rest, old_rest, skip)
    if added and removed:
        differences.append(f"wording: {', '.join(removed)} -> {', '.join(added)}")
    return Comparison(not differences, differences, sorted(added))


def content_terms(text: str, skip: set[str] = frozenset()) -> set[str]:
    """Meaning-bearing words, stemmed and mapped to a canonical synonym; framing, sentiment
    verbs (polarity is compared separately), filler and names in ``skip`` left out."""
    out = set()
    for word in statement_words(text):
        word = word.removesuffix("'s")
        if word in FRAMING or word in CLAIM_NEGATORS or word in POSITIVE or word in NEGATIVE or word in FILLER or word in skip:
            continue
        if word.endswith("n't") or not any(c.isalpha() for c in word):
            continue
        stemmed = suffix_stem(word)
        if stemmed in skip:
            continue
        out.add(SYNONYMS.get(word, SYNONYMS.get(stemmed, stemmed)))
    return out


def term_change(new: str, old: str, skip: set[str] = frozenset()) -> tuple[list[str], list[str]]:
    """Content terms only the new statement has, and only the old one has."""
    mine, theirs = content_terms(new, skip), content_terms(old, skip)
    return sorted(mine - theirs), sorted(theirs - mine)
