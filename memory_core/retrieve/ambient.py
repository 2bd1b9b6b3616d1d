"""Assembling an ambient profile: the bounded block of preferences put in a session's prompt prefix.

Assembly reads the store once, at session start, as the session's principal: only records in
scopes that principal may read *and* that are the user's own (``user:<id>``, a private
``agent:<agent>/<id>``) are considered, each must pass ``policy.ambient.ambient_status``, and the
survivors are taken in a fixed order (category, attribute, oldest first, id) until the item or
token bound is reached. The result is a value: the caller records it on the session and never
assembles again for that session, so later writes cannot change what the model saw.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import display
from ..policy.ambient import (
    AMBIENT, ATTRIBUTES, CANDIDATE, LIVE_STATUSES, AmbientStatus, ambient_status, category_of, owned_by, sort_key,
)
from ..store import ambient as ambient_store
from ..store.db import Store
from ..store.records import Record
from ..text import count_tokens

HEADER = ("About this user: standing preferences for every answer, from their own statements or reviewed by a person. "
          "Apply them unless the user asks for something else in this conversation.")


@dataclass(frozen=True)
class ProfileItem:
    """One record in a profile, with where it came from and the exact line the model reads."""

    record_id: str
    version: int
    lineage_id: str
    scope: str
    category: str
    attribute: str
    source_kind: str
    basis: str
    text: str
    tokens: int


@dataclass
class AmbientProfile:
    """A profile as assembled: the items, what was left out and why, and the exact prefix text."""

    items: list[ProfileItem] = field(default_factory=list)
    excluded: list[dict[str, Any]] = field(default_factory=list)
    limits: dict[str, int] = field(default_factory=dict)

    @property
    def text(self) -> str | None:
        """The block put in the prefix (None when no record qualifies: nothing is added)."""
        return render_profile([item.text for item in self.items])

    @property
    def tokens(self) -> int:
        return count_tokens(self.text) if self.text else 0

    def _repr_html_(self) -> str:
        return display.html(self)

    def to_dataframe(self):
        """The items as a pandas DataFrame (record, version, category, why ambient, text...)."""
        return display.frame(self)

    def to_dict(self) -> dict[str, Any]:
        return {"items": [asdict(i) for i in self.items], "excluded": list(self.excluded), "limits": dict(self.limits),
                "text": self.text, "tokens": self.tokens}


def item_line(content: str) -> str:
    """A record's content as one profile line: whitespace (newlines included) collapsed, so a
    record cannot add lines or headings of its own to the prefix."""
    return " ".join(content.split())


def render_profile(lines: list[str]) -> str | None:
    """The profile block for ``lines`` (None when there are none)."""
    if not lines:
        return None
    return "\n".join([HEADER, *(f"- {line}" for line in lines)])


def own_readable_scopes(readable: Iterable[str], user_id: str) -> list[str]:
    """The readable scopes that belong to ``user_id`` (shared project and org scopes never feed a profile)."""
    return sorted(scope for scope in readable if owned_by(scope, user_id))


def classified_records(store: Store, scopes: list[str], *, user_id: str | None = None,
                       now: str | None = None) -> list[tuple[Record, AmbientStatus]]:
    """Live semantic records with a response-shaping attribute in ``scopes`` (every scope when
    empty and ``user_id`` is None), each with its ambient status, in profile order."""
    # Only the listed attributes are read (most of a user's memory is conditional and never loaded).
    records = ambient_store.attribute_records(store, tuple(ATTRIBUTES), tuple(LIVE_STATUSES),
                                              scopes if (scopes or user_id is not None) else None, now)
    records = [r for r in records if category_of(r.attribute) is not None]
    decisions = ambient_store.latest_decisions(store, [r.lineage_id for r in records])
    owners = ambient_store.owner_person_entities(store, [r.subject_entity_id for r in records if r.subject_entity_id])
    out = [(r, ambient_status(r, decisions.get(r.lineage_id), user_id,
                              r.subject_entity_id is None or owners.get(r.subject_entity_id) == _owner(r.scope)))
           for r in records]
    return sorted(out, key=lambda pair: sort_key(pair[0]))


def _owner(scope: str) -> str | None:
    kind, _, rest = scope.partition(":")
    if kind == "user":
        return rest
    return rest.split("/", 1)[1] if kind == "agent" and "/" in rest else None


def assemble_profile(store: Store, *, user_id: str, readable: Iterable[str], max_items: int, max_tokens: int,
                     now: str | None = None) -> AmbientProfile:
    """The profile of ``user_id`` as a principal that may read ``readable`` would get it now."""
    profile = AmbientProfile(limits={"max_items": max_items, "max_tokens": max_tokens})
    lines: list[str] = []
    for record, status in classified_records(store, own_readable_scopes(readable, user_id), user_id=user_id, now=now):
        if status.state != AMBIENT:
            if status.state == CANDIDATE:
                profile.excluded.append({"record_id": record.id, "version": record.version, "reason": status.reason})
            continue
        line = item_line(record.content)
        if not line:
            continue
        if len(profile.items) >= max_items:
            profile.excluded.append({"record_id": record.id, "version": record.version,
                                     "reason": f"over the item bound ({max_items})"})
            continue
        if count_tokens(render_profile([*lines, line]) or "") > max_tokens:
            profile.excluded.append({"record_id": record.id, "version": record.version,
                                     "reason": f"over the token bound ({max_tokens})"})
            continue
        lines.append(line)
        profile.items.append(ProfileItem(
            record_id=record.id, version=record.version, lineage_id=record.lineage_id, scope=record.scope,
            category=status.category or "", attribute=record.attribute or "", source_kind=record.source_kind,
            basis=status.reason, text=line, tokens=count_tokens(line),
        ))
    return profile
