"""Which records may be ambient: the eligibility rules of the ambient profile (docs/ambient.md).

An ambient record reaches the model without a search, in the prompt prefix, for a whole session.
That is only safe for a narrow class: stable preferences about how to answer this user (answer
style, language, units, how to address them, accessibility needs) that the user stated, the host
vouched for, or a reviewer approved. Everything else stays conditional and behind memory_search.

The rules are structural, not semantic: a record qualifies by its type, attribute, scope, source,
status and time bounds, which the write path sets and a person can inspect. They never read the
record's words, so a record cannot talk its way into the prefix. Pure functions; the SQL lives in
``store.ambient`` and assembly in ``retrieve.ambient``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .scopes import parse_scope

# Profile categories in profile order, each with the attributes (normalised, as the write path
# stores them) that belong to it. An attribute outside this table is never ambient: a trip, a
# diagnosis, a project detail or any other fact only matters to some turns.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "language": ("language", "preferred_language", "language_preference", "reply_language", "answer_language",
                 "response_language"),
    "address": ("preferred_name", "form_of_address", "name_to_use", "address_as", "pronouns", "title_preference",
                "name_preference", "nickname"),
    "accessibility": ("accessibility", "accessibility_needs", "accessibility_need", "accessibility_preference",
                      "screen_reader", "reading_needs", "font_size_preference", "colour_vision", "color_vision"),
    "answer_style": ("answer_style", "answer_preference", "answer_length", "response_style", "response_preference",
                     "response_length", "reply_style", "tone", "tone_preference", "verbosity", "format_preference",
                     "formatting_preference", "explanation_style", "code_style_preference"),
    "units": ("units", "unit_preference", "unit_system", "measurement_units", "measurement_system",
              "temperature_unit", "date_format", "time_format", "currency_preference"),
}
_CATEGORY_OF = {attribute: category for category, attributes in CATEGORIES.items() for attribute in attributes}
CATEGORY_ORDER = {category: i for i, category in enumerate(CATEGORIES)}
ATTRIBUTES: tuple[str, ...] = tuple(_CATEGORY_OF)

TRUSTED_SOURCES = ("user_statement", "system")
LIVE_STATUSES = ("confirmed", "provisional")
DECISIONS = ("approved", "refused", "removed", "restored")

# What a record's ambient state can be.
AMBIENT = "ambient"          # goes into the next profile of a session that may read it
CANDIDATE = "candidate"      # eligible but untrusted: waits for a reviewer
REFUSED = "refused"          # a reviewer refused this version
REMOVED = "removed"          # the user took it out of their profile (the whole lineage)
INELIGIBLE = "ineligible"    # never ambient (the reason says which rule)


def category_of(attribute: str | None) -> str | None:
    """The profile category of a normalised attribute, or None when it is not response-shaping."""
    return _CATEGORY_OF.get(attribute or "")


def owned_by(scope: str, user_id: str) -> bool:
    """Whether ``scope`` is ``user_id``'s own: ``user:<id>`` or a private ``agent:<agent>/<id>``."""
    parsed = parse_scope(scope)
    if parsed.kind == "user":
        return parsed.id == user_id
    parts = parsed.private_parts
    return parts is not None and parts[1] == user_id


@dataclass(frozen=True)
class AmbientStatus:
    """A record's place in the ambient tier, with the reason a person reads."""

    state: str
    reason: str
    category: str | None = None

    @property
    def allow(self) -> bool:
        return self.state == AMBIENT

    def __bool__(self) -> bool:
        return self.allow


def _field(record: Any, name: str) -> Any:
    return record[name] if isinstance(record, dict) else getattr(record, name)


def ineligibility(record: Any, user_id: str | None = None, subject_is_owner: bool = True) -> str | None:
    """Why ``record`` can never be ambient (for ``user_id`` when given), or None if its kind may be.

    ``subject_is_owner``: the record is about the scope's own user (no subject entity, or the
    user's own person entity), not about someone they mentioned.
    """
    if _field(record, "type") != "semantic":
        return "only semantic statements can shape every answer; episodes and procedures stay behind search"
    if _field(record, "source_kind") == "agent_inference":
        return "an inference is never ambient"
    status = _field(record, "status")
    if status not in LIVE_STATUSES:
        return f"the record is {status}"
    attribute = _field(record, "attribute")
    if category_of(attribute) is None:
        return (f"attribute {attribute!r} is not a response-shaping preference (language, address, accessibility, "
                "answer style, units); conditional facts stay behind search")
    for name in ("valid_from", "valid_until", "review_at", "event_at"):
        if _field(record, name):
            return f"it carries {name}: a fact bound to a time is conditional"
    scope = f"{_field(record, 'scope_kind')}:{_field(record, 'scope_id')}"
    if parse_scope(scope).kind not in ("user", "agent"):
        return f"scope {scope} is shared (project or org), not the user's own"
    if user_id is not None and not owned_by(scope, user_id):
        return f"scope {scope} is not user {user_id}'s own"
    if not subject_is_owner:
        return "it is about someone else, not the user"
    return None


def ambient_status(record: Any, decision: dict[str, Any] | None, user_id: str | None = None,
                   subject_is_owner: bool = True) -> AmbientStatus:
    """The ambient state of ``record`` given its lineage's latest decision (a dict with ``decision``,
    ``record_id``, ``actor``, ``at``; None when nobody decided)."""
    why_not = ineligibility(record, user_id, subject_is_owner)
    category = category_of(_field(record, "attribute"))
    if why_not is not None:
        return AmbientStatus(INELIGIBLE, why_not, category)
    kind = decision.get("decision") if decision else None
    same_version = bool(decision) and decision.get("record_id") == _field(record, "id")
    if kind == "removed":
        return AmbientStatus(REMOVED, f"removed from the profile by {decision['actor']} at {decision['at']}", category)
    if kind == "refused" and same_version:
        return AmbientStatus(REFUSED, f"refused by {decision['actor']} at {decision['at']}", category)
    source, status = _field(record, "source_kind"), _field(record, "status")
    if source in TRUSTED_SOURCES and status == "confirmed":
        return AmbientStatus(AMBIENT, f"trusted: a confirmed {source.replace('_', ' ')}", category)
    if kind == "approved" and same_version:
        return AmbientStatus(AMBIENT, f"approved by {decision['actor']} at {decision['at']}", category)
    return AmbientStatus(CANDIDATE, f"a {status} {source.replace('_', ' ')}: needs a reviewer's approval", category)


def sort_key(record: Any) -> tuple:
    """Profile order: category, attribute, oldest first, then id (deterministic)."""
    return (CATEGORY_ORDER.get(category_of(_field(record, "attribute")) or "", 99), _field(record, "attribute") or "",
            _field(record, "created_at"), _field(record, "id"))
