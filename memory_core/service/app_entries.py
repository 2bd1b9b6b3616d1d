"""Memories a person writes or edits in the admin app, through the same write path as the tools.

A mixin of :class:`~memory_core.service.MemoryService`, like the other ``*_methods`` modules. What
the app may do is decided by the person's role (``admin_ui.data.actions`` checks it), so the write
is made with an access that names the one scope the person may change; everything else is the
ordinary write path of ``memory_write`` / ``memory_revise``: input checks, the claim rules (source
ranks, supersession, contradiction flags), dedupe and reinforcement, the event and write logs.

The source of an app entry is honest about who said it (docs/write-path.md, "Written in the admin
app"):

- a user writing about themselves makes a ``user_statement``: they said it, as they would in a chat;
- a staff member (operator, admin) writing for a user makes a ``system`` record: an authoritative
  statement that ranks below the user's own words, so it never replaces what the user said and a
  contradiction with it is flagged for review instead.

Either way the evidence is the text as the person entered it, ``creator_agent_id`` is
:data:`APP_AGENT`, ``source_ref`` is ``admin-app:<actor>`` (``admin-app:ui:alice``) and the actor of
every event is the person (``ui:alice``).
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from ..clock import parse_ts
from ..errors import InvalidInputError, PolicyError
from ..inputs import check_text
from ..policy.grants import ScopeAccess
from ..policy.rules import may_supersede
from ..policy.scopes import Scope, validate_id
from ..store.records import Record

if TYPE_CHECKING:
    from ..ingest.writer import WriteOutcome

APP_AGENT = "admin-app"
SOURCE_REF_PREFIX = "admin-app:"
# What a spreadsheet reads as the start of a formula (ASCII and full-width), as in the export's rule.
FORMULA_LEADS = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")
# Format characters that are part of ordinary text: joiners inside emoji and Persian or Indic words.
ALLOWED_FORMAT = frozenset("\u200c\u200d")
ENTRY_TYPES = ("semantic", "episodic")


def check_entry_text(text: str | None, field: str, limit: int) -> str:
    """``text`` without surrounding whitespace, or InvalidInputError saying what is wrong with it:
    empty, too long, a lone surrogate, an invisible or direction-changing character (bidi
    overrides, zero-width spaces, tag characters), a control character, or a formula lead."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError(f"{field} must not be empty", field=field)
    check_text(text, field)
    text = text.strip()
    if len(text) > limit:
        raise InvalidInputError(f"{field} is {len(text)} characters; the limit is {limit}", field=field)
    for n, ch in enumerate(text, 1):
        category = unicodedata.category(ch)
        if (category == "Cf" and ch not in ALLOWED_FORMAT) or (category == "Cc" and ch != "\n"):
            name = unicodedata.name(ch, "a control character")
            raise InvalidInputError(
                f"{field} holds an invisible or control character (U+{ord(ch):04X} {name}) at position {n}; "
                "remove it and type the text plainly", field=field)
        if category in ("Co", "Cn"):
            raise InvalidInputError(f"{field} holds an unassigned or private-use character (U+{ord(ch):04X}) at "
                                    f"position {n}", field=field)
    if text[0] in FORMULA_LEADS:
        raise InvalidInputError(f"{field} starts with {text[0]!r}, which a spreadsheet reads as a formula; "
                                "start it with a word", field=field)
    return text


def _owner(scope: Scope) -> str:
    """The user a scope belongs to (``user:alice``, ``agent:assistant/alice``), else the app itself."""
    if scope.kind == "user":
        return scope.id
    parts = scope.private_parts
    return parts[1] if parts else APP_AGENT


def entered_by(record: Record) -> str | None:
    """The actor who entered ``record`` in the admin app (``ui:alice``), or None for other records."""
    ref = record.source_ref or ""
    return ref[len(SOURCE_REF_PREFIX):] if ref.startswith(SOURCE_REF_PREFIX) else None


class AppEntryMethods:
    """``enter_memory`` and ``revise_entry``: a person's write and edit from the admin app."""

    def _entry_limit(self) -> int:
        write = self.settings.write  # type: ignore[attr-defined]
        return min(write.max_content_chars, write.max_evidence_chars)  # the text is its own evidence

    def _entry_access(self, scope: Scope, actor: str, as_user: bool) -> ScopeAccess:
        why = f"{'the user' if as_user else 'staff member'} {actor} in the admin app"
        return ScopeAccess(APP_AGENT, _owner(scope), readable={scope.key: why}, writable={scope.key: why})

    def enter_memory(self, *, user_id: str, content: str, actor: str, as_user: bool, reason: str | None = None,
                     type: str = "semantic", attribute: str | None = None) -> "WriteOutcome":
        """Write a memory in ``user:<user_id>`` as a person in the admin app: a ``user_statement``
        when the user writes about themselves (``as_user``), a ``system`` record when staff write
        for them (a reason is then required). Bad input raises InvalidInputError and writes nothing."""
        from ..ingest.writer import WriteRequest

        user_id = validate_id((user_id or "").strip(), "user_id")
        if type not in ENTRY_TYPES:
            raise InvalidInputError(f"type must be one of {', '.join(ENTRY_TYPES)}", field="type")
        text = check_entry_text(content, "content", self._entry_limit())
        why = self._entry_reason(reason, as_user)
        attribute = check_entry_text(attribute, "attribute", 200) if attribute and attribute.strip() else None
        scope = Scope("user", user_id)
        request = WriteRequest(
            type=type, content=text, scope=scope, source_kind="user_statement" if as_user else "system",
            agent_id=APP_AGENT, user_id=user_id, actor=actor, attribute=attribute, evidence=text,
            event_at=self.clock.now() if type == "episodic" else None,  # type: ignore[attr-defined]
            source_ref=f"{SOURCE_REF_PREFIX}{actor}", operation=f"app_entry: {why}", evidence_verified=True,
        )
        return self.ingestor.write(request, self._entry_access(scope, actor, as_user))  # type: ignore[attr-defined]

    def revise_entry(self, record_id: str, *, content: str, actor: str, as_user: bool, reason: str | None = None) -> "WriteOutcome":
        """A new version of a live record with the person's text as its content and evidence,
        under the same source rule as :meth:`enter_memory`; the claim rules decide whether it may
        replace the record (a staff ``system`` edit cannot replace a user's own statement)."""
        from ..ingest.writer import WriteRequest

        record: Record = self.record(record_id)  # type: ignore[attr-defined]
        text = check_entry_text(content, "content", self._entry_limit())
        why = self._entry_reason(reason, as_user)
        if text == record.content:
            raise InvalidInputError("the new content is the same as the record's; change it or cancel", field="content")
        source = "user_statement" if as_user else "system"
        if record.status in ("provisional", "confirmed") and record.type != "episodic":
            if not may_supersede(source, record.source_kind):
                raise PolicyError(
                    f"a staff member's edit is a system statement and cannot replace the user's own statement "
                    f"({record.source_kind}); ask the user to change it, or forget it", record_id=record.id)
        scope = Scope(record.scope_kind, record.scope_id)
        request = WriteRequest(
            type=record.type, content=text, scope=scope, source_kind=source, agent_id=APP_AGENT,
            user_id=_owner(scope), actor=actor,
            attribute=record.attribute, evidence=text, tags=list(record.tags), event_at=parse_ts(record.event_at),
            valid_from=parse_ts(record.valid_from), valid_until=parse_ts(record.valid_until),
            review_at=parse_ts(record.review_at) if not record.review_flagged_at else None,
            source_ref=f"{SOURCE_REF_PREFIX}{actor}", operation=f"memory_revise: {why}", evidence_verified=True,
            revises=record,
        )
        return self.ingestor.write(request, self._entry_access(scope, actor, as_user))  # type: ignore[attr-defined]

    @staticmethod
    def _entry_reason(reason: str | None, as_user: bool) -> str:
        text = (reason or "").strip()
        if not text:
            if not as_user:
                raise InvalidInputError("give a reason: a memory written for someone else keeps why", field="reason")
            return "entered by the user"
        check_text(text, "reason")
        if len(text) > 1000:
            raise InvalidInputError(f"reason is {len(text)} characters; the limit is 1000", field="reason")
        return text
