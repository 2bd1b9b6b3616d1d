"""Information gaps: what a user turn leaves unsaid that a stored memory could fill.

A gap is a standalone search query plus the terms a record must hold to fill it. The offline finder
is a small, deliberately narrow rule set (docs/host-memory.md): a turn yields gaps only when it is a
request for the user (not small talk, not a general-knowledge question), it touches a topic where a
stored personal fact changes the answer (food, travel, scheduling, writing, code, ...), and the turn
itself does not already state the value (a "vegan recipe" needs no diet lookup). A turn that
points at something the user owns ("my dog", "my landlord") yields a gap about that thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..text import INNER_APOSTROPHE_WORD as WORD


@dataclass(frozen=True)
class Gap:
    """One missing piece of information: the query searched and the terms that fill it."""

    query: str
    focus: tuple[str, ...] = ()  # term stems a record must hold (lexical agreement on the gap's own terms)
    topic: str = "model"  # the offline rule that produced it, or "model" / "possession"
    anchor: str | None = None  # a word the record must also hold (the thing the turn is about)

    def to_dict(self) -> dict:
        return {"query": self.query, "focus": list(self.focus), "topic": self.topic, "anchor": self.anchor}


@dataclass(frozen=True)
class GapRule:
    """A topic where a stored fact about the user changes the answer."""

    topic: str
    triggers: tuple[str, ...]  # words (stems) in the turn that open the topic
    query: str  # the standalone gap query (no names: it asks about the user)
    focus: tuple[str, ...]  # stems a record filling the gap holds
    fillers: tuple[str, ...] = ()  # stems that show the turn already states the value
    anchored: bool = False  # the record must also hold the word that opened the topic ("laptop")


RULES: tuple[GapRule, ...] = (
    GapRule("diet", ("restaurant", "dinner", "lunch", "breakfast", "recipe", "cook", "meal", "menu", "snack", "bake",
                     "grocer", "dish", "cater", "brunch"),
            "user is vegetarian or vegan or allergic to food",
            ("vegetarian", "vegan", "diet", "allerg", "gluten", "dairy", "lactose", "meat", "pescatarian", "kosher",
             "halal", "peanut", "shellfish", "celiac", "coeliac"),
            ("vegetarian", "vegan", "gluten", "dairy", "meat", "chicken", "beef", "pork", "fish", "keto", "halal", "kosher")),
    GapRule("home", ("nearby", "near$", "local", "commute", "neighbourhood", "neighborhood", "around$"),
            "user lives in which city",
            ("live", "lives", "living", "based", "moved"),
            ("in$",)),
    GapRule("schedule", ("meeting", "schedule", "calendar", "appointment", "slot", "standup", "call$"),
            "the user's working hours and time zone for meetings",
            ("timezone", "zone", "utc", "gmt", "cet", "pst", "est", "working", "hours", "meetings"),
            ("utc", "gmt", "cet", "pst", "est", "o'clock", "am$", "pm$")),
    GapRule("travel", ("flight", "fly$", "trip", "travel", "hotel", "vacation", "holiday", "airport", "train$", "trains$"),
            "which seat the user wants on flights",
            ("seat", "aisle", "window", "airline", "layover", "flights"),
            ("aisle", "window")),
    GapRule("code", ("code", "script", "function", "program", "implement", "snippet", "refactor", "parser", "regex",
                     "endpoint"),
            "which programming language the user writes code in",
            ("python", "rust", "golang", "java", "typescript", "javascript", "kotlin", "swift", "ruby", "language",
             "code", "programming"),
            ("python", "rust", "golang", "java", "typescript", "javascript", "kotlin", "swift", "ruby", "c++", "sql",
             "bash", "haskell")),
    GapRule("correspondence", ("email", "e-mail", "letter", "reply", "message", "memo", "announcement", "invitation"),
            "how the user wants emails and messages written: tone and length",
            ("concise", "short", "brief", "formal", "informal", "tone", "casual", "emails", "messages", "letters"),
            ("formal", "informal", "casual", "short", "brief", "concise", "detailed")),
    GapRule("health", ("workout", "exercise", "gym", "training", "stretch", "hike", "hiking", "marathon", "jog", "yoga",
                       "run$", "running"),
            "the user's injuries and health conditions that limit exercise",
            ("knee", "back", "injur", "asthma", "condition", "pain", "surgery", "ankle", "shoulder", "physio"),
            ()),
    GapRule("units", ("temperature", "distance", "forecast", "how far", "how hot", "how cold"),
            "which units the user prefers: metric or imperial",
            ("metric", "imperial", "celsius", "fahrenheit", "kilomet", "miles", "units"),
            ("celsius", "fahrenheit", "metric", "imperial", "kilomet", "miles", "pounds", "kilogram")),
    GapRule("purchase", ("laptop", "phone", "computer", "camera", "headphones", "bike", "car$", "tablet", "monitor", "sofa"),
            "the user's budget for a new {trigger}",
            ("budget", "spend", "afford"),
            ("$", "€", "£", "budget", "euros", "dollars", "pounds"),
            anchored=True),
    GapRule("deploy", ("deploy", "release", "hotfix", "rollout", "production", "staging"),
            "how the project deploys releases",
            ("deploy", "release", "branch", "freeze", "kubernetes", "pipeline"),
            ()),
    GapRule("database", ("database", "schema", "migration", "backup", "sql$", "query$"),
            "which database the project uses",
            ("database", "postgres", "sqlite", "mysql", "mongodb", "redis"),
            ("postgres", "sqlite", "mysql", "mongodb", "redis")),
    GapRule("deadline", ("deadline", "timeline", "due$", "launch", "milestone"),
            "the project's deadline",
            ("deadline", "due", "launch", "milestone"),
            ()),
)

_REQUEST_START = re.compile(
    r"^\s*(?:please\s+)?(?:can|could|would|will)\s+you\b|^\s*(?:please\s+)?(?:help|recommend|suggest|plan|book|find|"
    r"write|draft|make|create|give|pick|choose|schedule|set|organi[sz]e|prepare|compose|propose|build|implement|"
    r"convert|summari[sz]e|rewrite|list|tell|show|get|order|reply|send|put|arrange)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i’m|i'd|i’d|i've|me|my|we|we're|our|us|mine)\b", re.IGNORECASE)
_NEED = re.compile(r"\b(?:i|we)\s+(?:need|want|would like|'d like|am looking|'m looking|have to|must|should)\b|"
                   r"\b(?:for me|for us|help me|should i|can i|could i|what should|which .* should)\b", re.IGNORECASE)
_NEARBY = re.compile(r"\b(?:nearby|near me|around here|close to me|for me)\b", re.IGNORECASE)
_SMALL_TALK = re.compile(r"^\s*(?:hi|hello|hey|thanks|thank you|thx|ok|okay|great|cool|good (?:morning|night|evening)|"
                         r"bye|goodbye|see you|nice|awesome|perfect)\b[\s!.,]*", re.IGNORECASE)
_GENERAL = re.compile(r"^\s*(?:what|who|when|where|why|how)\s+(?:is|are|was|were|did|does|do)\b|^\s*(?:explain|define|"
                      r"describe)\b|\bhistory of\b|\bin general\b", re.IGNORECASE)
_POSSESSION = re.compile(r"\bmy\s+([^\W\d_]{3,}(?:\s+[^\W\d_]{3,})?)", re.IGNORECASE)
_NOT_POSSESSIONS = {
    "own", "self", "mind", "opinion", "question", "answer", "last", "first", "previous", "next", "best", "favourite",
    "favorite", "way", "turn", "time", "life", "day", "week", "code", "email", "message", "letter", "draft", "text",
    "notes", "note", "work", "job", "name", "goodness", "god", "bad", "apologies", "thanks", "request", "reply", "problem",
    "issue", "list", "plan", "trip", "post", "essay", "meeting", "calendar", "schedule", "flight", "dinner", "lunch",
    "birthday", "house", "home", "flat", "apartment", "room", "place", "stuff", "things", "computer", "laptop", "phone",
}


def words(text: str) -> list[str]:
    """Casefolded words of ``text``."""
    return [w.casefold().replace("’", "'") for w in WORD.findall(text or "")]


def has_stem(tokens: list[str], stems: tuple[str, ...]) -> list[str]:
    """The stems of ``stems`` that begin some token (a stem of 4+ letters matches longer forms;
    shorter stems, and stems ending in ``$``, match whole words only: 'est' is not 'best', 'train$'
    is not 'training'). A stem with a space or a symbol is matched in the joined text."""
    found = []
    joined = " " + " ".join(tokens) + " "
    for stem in stems:
        exact = stem.endswith("$")
        s = stem.rstrip("$").strip()
        if not s:
            continue
        if " " in s or not s.replace("-", "").replace("'", "").isalnum():
            hit = s in joined
        else:
            hit = any(t == s or (not exact and len(s) >= 4 and t.startswith(s)) for t in tokens)
        if hit:
            found.append(stem)
    return found


def is_request(turn: str) -> bool:
    """Whether the turn asks for something done for the user (not small talk, not a general-knowledge
    question with no first-person stake)."""
    text = turn.strip()
    if not text:
        return False
    if _SMALL_TALK.match(text) and len(words(text)) <= 6:
        return False
    personal = bool(_FIRST_PERSON.search(text) or _NEARBY.search(text))
    if _GENERAL.search(text) and not personal:
        return False
    return bool(_REQUEST_START.search(text) or _NEED.search(text) or (personal and "?" in text))


@dataclass
class OfflineGapFinder:
    """The offline gap rules (see module docstring)."""

    rules: tuple[GapRule, ...] = field(default=RULES)
    name: str = "offline-rules"

    def find(self, turn: str, max_gaps: int) -> tuple[list[Gap], str]:
        """Gaps of ``turn`` (at most ``max_gaps``) and why: an ordinary turn yields none."""
        if not is_request(turn):
            return [], "not a request for the user (small talk, a statement or a general question): no gap"
        tokens = words(turn)
        lowered = turn.casefold()
        gaps: list[Gap] = []
        filled: list[str] = []
        for match in _POSSESSION.finditer(turn):
            head = match.group(1).casefold().split()[0]
            if head not in _NOT_POSSESSIONS and all(g.focus != (head,) for g in gaps):
                gaps.append(Gap(f"the user's {head}", (head,), "possession"))
        for rule in self.rules:
            opened = has_stem(tokens, rule.triggers)
            if not opened:
                continue
            if any((f in lowered) if not f.rstrip("$").replace("'", "").isalnum() else bool(has_stem(tokens, (f,)))
                   for f in rule.fillers):
                filled.append(rule.topic)
                continue
            trigger = opened[0].rstrip("$")
            word = next((t for t in tokens if t.startswith(trigger)), trigger)
            gaps.append(Gap(rule.query.format(trigger=word), rule.focus, rule.topic, anchor=word if rule.anchored else None))
        if not gaps:
            reason = "the turn states what it needs" if filled else "no topic where a stored fact about the user changes the answer"
            return [], reason + (f" (filled: {', '.join(filled)})" if filled else "")
        kept = gaps[:max_gaps]
        return kept, f"{len(kept)} gap(s): {', '.join(g.topic for g in kept)}" + (f"; filled by the turn: {', '.join(filled)}" if filled else "")
