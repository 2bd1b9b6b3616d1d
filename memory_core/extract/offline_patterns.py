"""First-person patterns of the offline extractor and the proposal each one makes.

A pattern matches the marker-stripped clause from its start ("I prefer ...", "My timezone is
...", "We decided ...", "I'm flying ... next Tuesday"); the first match decides the category,
record type, attribute and the third-person content. Objects that point back into the
conversation ("I like that idea"), passing states ("my manager is out") and plans without a
date beyond today are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..policy.claims import extract_values
from .offline_rules import ADVERBS, capitalised_mentions, rest_pronouns, strip_markers, temporal_expressions, third_person


@dataclass
class Proposal:
    """A matched sentence: its category, third-person content and temporal expressions."""

    category: str  # preference | fact | decision | plan
    type: str
    content: str
    attribute: str | None
    temporal: dict[str, str] = field(default_factory=dict)
    mentions: list[str] = field(default_factory=list)
    correction: bool = False


_DEICTIC_OBJECT = re.compile(
    r"^(?:it|that|this|these|those|them|you|your|yours|how|when|what|where|why|whatever|the way|what you"
    r"|the (?:idea|option|one|plan|version|approach|draft|suggestion|proposal|answer"
    r"|response|summary|list|example|first|second|third|last|latter|former)\b|one\b|both\b)",
    re.IGNORECASE,
)
_NOT_IMPERATIVE = re.compile(
    r"^(?:the|a|an|my|our|your|their|his|her|its|it|we|i|they|he|she|there|everything|all|every|each|any|no)\b", re.IGNORECASE)
_DEICTIC_ANYWHERE = re.compile(r"\b(?:this|that|these|those|here|above|below)\b", re.IGNORECASE)

ROLE_NOUNS = (
    r"(?:engineer|developer|programmer|designer|manager|scientist|teacher|nurse|doctor|student|researcher|analyst|consultant|writer"
    r"|lawyer|architect|accountant|founder|director|lead|product manager|editor|journalist|professor|lecturer|chef|pharmacist"
    r"|administrator|admin|tester|marketer|recruiter|owner|freelancer|contractor|intern)s?"
)
_MY_ATTRIBUTES = (
    r"(?:favou?rite|preferred) [a-z ]{2,30}?|time ?zone|birthday|pronouns|email(?: address)?|phone number|manager|boss|role"
    r"|job title|job|title|team|home ?town|native language|first language|name"
)

_BOUNDARY = re.compile(r"\s+(?:over|to|than|instead|for|when|because|so|in|on|at|with|during|while|as|and|or)\b|[,;:(]", re.IGNORECASE)
_PERSON = (
    r"sister|brother|wife|husband|partner|boyfriend|girlfriend|boss|manager|friend|mom|mum|dad|mother|father|son|daughter|kid|kids"
    r"|child|children|colleague|coworker|co-worker|team|teammate|neighbou?r|roommate|cousin|aunt|uncle|grandma|grandpa|client|customer"
)
_EVENTS = (
    r"appointment|flight|trip|vacation|holiday|holidays|meeting|interview|exam|surgery|birthday|wedding|talk|presentation|deadline"
    r"|move|leave|shift|class|lesson|train|review|demo|launch|release|operation|check-?up|visit|conference|defen[cs]e|race|marathon"
)
_PLAN_VERBS = (
    r"going to|planning to|planning on|about to|flying|driving|moving|starting|leaving|visiting|travell?ing|heading|meeting"
    r"|taking|presenting|attending|joining|interviewing|giving|running|hosting|off|out|away|back|on (?:vacation|holiday|leave|call|pto)"
)


def _head_attribute(obj: str, suffix: str) -> str | None:
    head = _BOUNDARY.split(obj, maxsplit=1)[0]
    words = re.findall(r"[A-Za-z][A-Za-z0-9]*", head)
    if not words:
        return None
    word = words[-1].lower()
    if word.endswith("s") and len(word) > 3 and not word.endswith("ss"):
        word = word[:-1]
    return f"{word}_{suffix}"


# The same thing said in other words gets the same attribute, so the write path compares them.
_ATTRIBUTE_SYNONYMS = {"boss": "manager", "email_address": "email", "e_mail": "email", "e_mail_address": "email",
                       "time_zone": "timezone", "home_town": "hometown", "mobile_number": "phone_number",
                       "phone": "phone_number", "cell_number": "phone_number", "passport_expiry_date": "passport_expiry"}


def canonical_attribute(text: str) -> str:
    """Lower-case, underscores, British spelling of favourite, and the synonyms above."""
    attribute = re.sub(r"\W+", "_", text.strip().lower()).strip("_")
    attribute = re.sub(r"^favorite_", "favourite_", attribute)
    return _ATTRIBUTE_SYNONYMS.get(attribute, attribute)


def _liking_attribute(obj: str) -> str | None:
    """"spicy food" → ``spicy_food_preference``: the whole object phrase up to the first boundary
    (so liking spicy food and liking Italian food are two subjects, and loving and hating jazz one)."""
    head = _BOUNDARY.split(obj, maxsplit=1)[0]
    words = re.findall(r"[A-Za-z][A-Za-z0-9-]*", head)[:4]
    if not words:
        return None
    words = [w.lower() for w in words]
    if words[-1].endswith("s") and len(words[-1]) > 3 and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]
    return canonical_attribute("_".join(words)) + "_preference"


def _fact_attribute(match: re.Match, name: str | None) -> str | None:
    if name in ("from_my", "my_value"):
        return canonical_attribute(match.group("attr"))
    if name == "family":  # "I have two kids" and "I have 3 children" are one subject: how many
        noun = match.group("family").lower()
        noun = {"kid": "children", "kids": "children", "child": "children", "son": "sons", "daughter": "daughters",
                "sister": "sisters", "brother": "brothers", "dog": "dogs", "cat": "cats"}.get(noun, noun)
        return f"{noun}_count" if noun not in ("partner", "wife", "husband") else "partner"
    if name == "my_event":
        return canonical_attribute(match.group("event"))
    return name


_FAMILY = r"dogs?|cats?|kids?|children|sons?|daughters?|sisters?|brothers?|partner|wife|husband"
_DIETS = r"vegetarian|vegan|pescatarian|lactose intolerant|gluten[- ]free|left-handed|right-handed|colou?r-?blind"
_ZONE = r"(?:[A-Z][\w-]*\s+){0,3}(?:Time|time)|[A-Z]{2,5}|UTC[+-]\d{1,2}|GMT[+-]\d{1,2}"


def _rule(category: str, record_type: str, pattern: str, rule: str | None, flags: int = re.IGNORECASE):
    return category, record_type, re.compile(pattern, flags), rule


# (category, record type, pattern over the marker-stripped clause, attribute or rule name); first match wins
RULES: list[tuple[str, str, re.Pattern, str | None]] = [
    _rule("preference", "semantic", rf"^I\s+{ADVERBS}prefer\s+(?P<obj>.+)", "prefer"),
    _rule("preference", "semantic", r"^I(?:'d| would) rather\s+(?P<obj>.+)", None),
    _rule("preference", "semantic", rf"^I\s+{ADVERBS}(?:like|love|enjoy|adore|hate|dislike|detest|loathe)\s+(?P<obj>.+)", "liking"),
    _rule("preference", "semantic", r"^I\s+(?:really\s+|just\s+)?(?:don't|don’t|do not)\s+(?:really\s+)?(?:like|enjoy|love)\s+(?P<obj>.+)", "liking"),
    _rule("preference", "semantic", r"^(?:please\s+)?always\s+(?P<obj>.+)", "standing"),
    _rule("preference", "semantic", r"^(?:from now on|going forward|in (?:the )?future),?\s+(?:please\s+)?(?P<obj>.+)", "standing"),
    _rule("fact", "semantic", r"^my name is\s+(?P<obj>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,3})\W*$", "name"),
    _rule("fact", "semantic", r"^I(?:'m| am)\s+(?P<obj>[A-Z][a-z][\w'-]*)\W*$", "name", flags=0),
    _rule("fact", "semantic", r"^(?:please\s+)?call me\s+(?P<obj>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)\W*$", "preferred_name"),
    _rule("fact", "semantic", rf"^my (?P<attr>{_MY_ATTRIBUTES}) (?:is|are)\s+(?P<obj>.+)", "from_my"),
    _rule("fact", "semantic", rf"^I\s+{ADVERBS}(?:live|am living|'m living)\s+in\s+(?P<obj>.+)", "home_location"),
    _rule("fact", "semantic", r"^I(?:'m| am)\s+(?:now\s+)?based\s+(?:in|out of)\s+(?P<obj>.+)", "home_location"),
    _rule("fact", "semantic", r"^I(?:'ve| have)?\s+(?:just\s+|recently\s+)?moved\s+to\s+(?P<obj>.+)", "home_location"),
    _rule("fact", "semantic", rf"^I\s+{ADVERBS}work\s+(?:at|for)\s+(?P<obj>.+)", "employer"),
    _rule("fact", "semantic", rf"^I\s+{ADVERBS}work\s+as\s+(?:an?\s+)?(?P<obj>.+)", "job_role"),
    _rule("fact", "semantic", rf"^I(?:'m| am)\s+(?:now\s+)?an?\s+(?P<obj>(?:[\w-]+\s+){{0,3}}{ROLE_NOUNS})\b.*", "job_role"),
    _rule("fact", "semantic", rf"^I\s+{ADVERBS}(?:work on|lead|manage|run|own|maintain)\s+(?P<obj>.+)", None),
    _rule("fact", "semantic", rf"^I(?:'m| am)\s+(?P<obj>{_DIETS})\b.*", "diet"),
    _rule("fact", "semantic", r"^I(?:'m| am)\s+allergic\s+to\s+(?P<obj>.+)", None),
    _rule("fact", "semantic", rf"^I(?:'m| am)\s+(?:on|in)\s+(?P<obj>{_ZONE})\b.*", "timezone", flags=0),
    _rule("fact", "semantic", rf"^I\s+{ADVERBS}(?:use|speak|code in|write in|program in|drive|ride)\s+(?P<obj>.+)", None),
    _rule("fact", "semantic", rf"^I have\s+(?P<obj>(?:an?|one|two|three|four|five|\d+)\s+(?:[\w-]+\s+)?(?P<family>{_FAMILY})\b.*)", "family"),
    _rule("fact", "semantic", r"^I(?:'m| am)\s+(?:studying|learning)\s+(?P<obj>.+)", None),
    _rule("decision", "episodic",
          r"^(?:I|we)(?:'ve| have)?\s+(?:finally\s+|just\s+)?(?:decided|agreed|chose|chosen|picked|settled on|opted)\b\s*(?P<obj>.+)", None),
    _rule("decision", "episodic", r"^(?:I|we)(?:'re| are|'m| am|'ll| will)\s+(?:going|go)\s+with\s+(?P<obj>.+)", None),
    _rule("decision", "episodic", r"^let(?:'s| us)\s+(?:go with|use|pick|choose|stick with|ship|switch to|move to)\s+(?P<obj>.+)", None),
    _rule("plan", "semantic", rf"^I(?:'m| am)\s+(?:{_PLAN_VERBS})\b\s*(?P<obj>.*)", None),
    _rule("plan", "semantic", r"^I(?:'ll| will| plan to| intend to|'ve got| have got)\s+(?P<obj>.+)", None),
    _rule("plan", "semantic",
          rf"^my\s+(?P<event>(?:(?!(?:{_PERSON})\b)[\w-]+\s+){{0,2}}(?:{_EVENTS})(?:\s+(?:to|from|in|at)\s+[A-Z][\w-]*)?)"
          r"\s+(?:is|are|starts|begins|ends|leaves|lands|departs|happens)\s+(?P<obj>.+)", "my_event"),
    _rule("fact", "semantic", rf"^my (?P<attr>(?!(?:{_PERSON})\b)[a-z][a-z-]*(?:\s+(?!is\b|are\b)[a-z][a-z-]*){{0,2}}) (?:is|are)\s+(?P<obj>.+)",
          "my_value"),
]


_STATE_OBJECT = re.compile(
    r"^(?:\w+ing\b|out|away|off|busy|sick|late|here|there|back|going|also|still|very|so|too|really|on|in|at|from|not)\b",
    re.IGNORECASE)
_SAME_DAY = re.compile(r"^(?:on\s+|by\s+)?(?:today|tonight)$", re.IGNORECASE)
_IT = re.compile(r"\b(?:it|this|that|these|those)\b", re.IGNORECASE)


def _unusable(category: str, rule: str | None, obj: str, temporal: list[tuple[str | None, str]]) -> bool:
    """Objects that point back into the conversation, describe a passing state, or are too vague."""
    if category == "plan":
        return bool(_IT.search(obj))
    if not obj or _DEICTIC_OBJECT.match(obj):
        return True
    if rule == "standing":
        return bool(_DEICTIC_ANYWHERE.search(obj) or _NOT_IMPERATIVE.match(obj))
    if rule == "from_my":  # "my manager is out today" is not who the manager is
        return bool(_STATE_OBJECT.match(obj) or temporal)
    if rule == "my_value":  # any "my X is Y" only when Y states a value (a number, date, time, amount, code)
        return not extract_values(obj) or bool(_STATE_OBJECT.match(re.sub(r"^(?:at|on)\s+(?=\d)", "", obj)))
    return False


def _content(rule: str | None, body: str, obj: str) -> str:
    obj = obj.rstrip(".!")
    if rule == "standing":
        obj = rest_pronouns(obj)
    if rule == "standing":
        if "always" in body.lower()[:20]:
            return f"The user wants the assistant to always {obj}."
        return f"The user wants the assistant to {obj} from now on."
    if rule == "name":
        return f"The user's name is {obj}."
    if rule == "preferred_name":
        return f"The user wants to be called {obj}."
    return third_person(body)


def classify(sentence: str) -> Proposal | None:
    """The proposal for one sentence that already passed :func:`veto`, or None."""
    body, correction = strip_markers(sentence)
    if not body:
        return None
    temporal = temporal_expressions(body)
    for category, record_type, pattern, rule in RULES:
        match = pattern.match(body)
        if not match:
            continue
        obj = (match.groupdict().get("obj") or "").strip()
        if _unusable(category, rule, obj, temporal):
            if rule in ("from_my", "my_value"):
                continue  # a later "my X is <value>" rule may still read it
            return None
        dated: dict[str, str] = {}
        for prep, expression in temporal:
            if prep in ("until", "till", "til", "through"):
                dated.setdefault("valid_until", expression)
            elif prep in ("from", "starting", "since", "as of", "beginning"):
                dated.setdefault("valid_from", expression)
            elif category == "plan" and not _SAME_DAY.match(expression):
                dated.setdefault("review_at", expression)
        if category == "plan" and "review_at" not in dated and "valid_from" not in dated:
            return None  # plans are extracted only with a date beyond today
        if category == "decision" and temporal:
            return None  # a dated decision is usually a plan in disguise; leave it to explicit writes
        if rule == "prefer":
            attribute = _head_attribute(obj, "preference")
        elif rule == "liking":
            attribute = _liking_attribute(obj)
        elif rule == "standing":
            attribute = _head_attribute(obj, "instruction")
        else:
            attribute = _fact_attribute(match, rule)
        return Proposal(category, record_type, _content(rule, body, obj), attribute, dated, capitalised_mentions(obj), correction)
    return None
