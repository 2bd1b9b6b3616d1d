"""Every change the app makes, each checked against the signed-in identity and audited.

Each function takes the service, the :class:`~admin_ui.auth.accounts.Identity` and a reason, checks the
role (and, for the ``user`` role, that the record is in a scope the user owns), then calls
:mod:`memory_core`, which writes the audit event with ``identity.actor`` as the actor. Errors are
``MemoryCoreError`` subclasses whose message the page shows as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_core.errors import InvalidInputError, NotFoundError, PermissionDeniedError
from memory_core.policy.rules import may_supersede
from memory_core.service.admin_methods import Record

from ..auth.accounts import Identity
from .dates import resolve_review_date


def require(identity: Identity, permission: str) -> None:
    """Raise PermissionDeniedError unless the identity's role allows ``permission``."""
    if not identity.can(permission):
        raise PermissionDeniedError(f"the {identity.role} role cannot {permission.replace('_', ' ')}", role=identity.role)


# The longest reason the app accepts: a sentence or a paragraph for the audit log, not a document.
REASON_LIMIT = 1000


def reason_problem(reason: str | None) -> str | None:
    """Why ``reason`` cannot be used (missing, or longer than REASON_LIMIT), or None when it can."""
    text = (reason or "").strip()
    if not text:
        return "Give a reason: it is kept in the audit log with your name."
    if len(text) > REASON_LIMIT:
        return (f"The reason is {len(text):,} characters long; the limit is {REASON_LIMIT:,}. "
                "Shorten it: nothing was changed.")
    return None


def require_reason(reason: str | None) -> str:
    """The reason without surrounding whitespace; InvalidInputError when there is none or it is too long."""
    problem = reason_problem(reason)
    if problem:
        raise InvalidInputError(problem, field="reason")
    return (reason or "").strip()


def visible_record(service, identity: Identity, record_id: str) -> Record:
    """The record if the identity may see it (the same not-found answer otherwise)."""
    try:
        record = service.record(record_id)
    except NotFoundError:
        record = None
    if record is None or not (identity.can("view_store") or identity.owns_scope(record.scope)):
        raise NotFoundError(f"no record {record_id}", record_id=record_id)
    return record


# -- records -----------------------------------------------------------------------------------


def forget_record(service, identity: Identity, record_id: str, reason: str) -> list[str]:
    """Tombstone and erase a record and its earlier versions; a user may forget only their own."""
    require(identity, "forget")
    reason = require_reason(reason)
    record = visible_record(service, identity, record_id)
    if not identity.owns_scope(record.scope):
        raise PermissionDeniedError(f"record {record_id} is not in a scope you own")
    return service.forget(record.id, actor=identity.actor, reason=reason)


def forget_preview(service, identity: Identity, record_id: str) -> list[str]:
    """The lines a forget form shows before confirmation: every place the record will be erased from."""
    require(identity, "forget")
    record = visible_record(service, identity, record_id)
    if not identity.owns_scope(record.scope):
        raise PermissionDeniedError(f"record {record_id} is not in a scope you own")
    return service.forget_preview(record.id)["lines"]


def confirm_record(service, identity: Identity, record_id: str, reason: str) -> Record:
    """A reviewer confirms a provisional record (promoted to confirmed at once)."""
    require(identity, "review")
    return service.confirm(record_id, actor=identity.actor, reason=require_reason(reason), promote=True)


# A person's edit in the app is a reviewed statement, not a guess: an edited inference becomes a
# ``system`` record (confirmed, no expiry); a user's own statement keeps its higher-ranked source.
REVIEWED_SOURCE_KIND = "system"


def revise_record(service, identity: Identity, record_id: str, content: str, reason: str):
    """A reviewer's edit: a new, confirmed version with the same evidence (see REVIEWED_SOURCE_KIND)."""
    require(identity, "review")
    reason = require_reason(reason)
    if not content or not content.strip():
        raise InvalidInputError("the new content must not be empty", field="content")
    record = service.record(record_id)
    source = record.source_kind if may_supersede(record.source_kind, REVIEWED_SOURCE_KIND) else REVIEWED_SOURCE_KIND
    return service.revise(None, record, content=content.strip(), reason=reason, actor=identity.actor,
                          source_kind=source)


def clear_review_flag(service, identity: Identity, record_id: str, reason: str, next_review_at: str | None = None) -> Record:
    """Clear a review-due flag; ``next_review_at`` ("next week", "2026-05-01") must resolve to a future date."""
    require(identity, "review")
    reason = require_reason(reason)
    when = None
    if next_review_at and next_review_at.strip():
        when = resolve_review_date(service, next_review_at).iso
    return service.clear_review_flag(record_id, actor=identity.actor, reason=reason, next_review_at=when)


@dataclass
class BulkResult:
    """What a bulk action did: ids that succeeded and the error for each that did not."""

    done: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    def summary(self, verb: str) -> str:
        text = f"{verb} {len(self.done)} record(s)"
        if self.failed:
            text += f"; {len(self.failed)} failed"
        return text


BULK_ACTIONS = {
    "confirm": ("review", lambda s, i, rid, reason: confirm_record(s, i, rid, reason)),
    "forget": ("forget", lambda s, i, rid, reason: forget_record(s, i, rid, reason)),
    "clear_flag": ("review", lambda s, i, rid, reason: clear_review_flag(s, i, rid, reason)),
}


def bulk(service, identity: Identity, action: str, record_ids: list[str], reason: str, progress=None) -> BulkResult:
    """Apply one review action to many records, each audited on its own; one failure does not stop the rest."""
    permission, fn = BULK_ACTIONS[action]
    require(identity, permission)
    reason = require_reason(reason)
    result = BulkResult()
    for n, record_id in enumerate(record_ids, 1):
        try:
            fn(service, identity, record_id, reason)
            result.done.append(record_id)
        except Exception as exc:  # noqa: BLE001 - reported per record
            result.failed[record_id] = getattr(exc, "message", str(exc))
        if progress:
            progress(n, len(record_ids))
    return result


# -- grants ------------------------------------------------------------------------------------


def add_grant(service, identity: Identity, agent_id: str, scope: str, read: bool, write: bool, reason: str) -> dict:
    """Create or change a grant; private scopes are refused by the policy with its reason."""
    require(identity, "grant")
    return service.grant(agent_id.strip(), scope.strip(), read=read, write=write, actor=identity.actor, reason=require_reason(reason))


def revoke_grant(service, identity: Identity, agent_id: str, scope: str, reason: str) -> None:
    """Remove an agent's grant on a scope."""
    require(identity, "grant")
    service.revoke(agent_id, scope, actor=identity.actor, reason=require_reason(reason))


# -- entities ----------------------------------------------------------------------------------


def merge_entities(service, identity: Identity, source_id: str, target_id: str, reason: str) -> dict:
    """The audited merge an operator approved (same-scope only; the core refuses others)."""
    require(identity, "merge")
    return service.merge_entities(source_id, target_id, actor=identity.actor, reason=require_reason(reason))


# -- maintenance -------------------------------------------------------------------------------


def reembed(service, identity: Identity, progress=None) -> int:
    """Re-embed every record with the configured model (admins only); returns how many."""
    require(identity, "maintain")
    # Small batches so the progress bar moves steadily (the cost per record is the same).
    return service.reembed(actor=identity.actor, progress=progress, batch_size=32)
