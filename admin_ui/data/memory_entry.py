"""Writing and editing a memory in the app: a user about themselves, staff for a user with a reason.

The role decides what may be written where (:data:`~admin_ui.auth.accounts.PERMISSIONS`
``write_memory``): a user writes only in their own ``user:<id>`` scope and edits only records in
scopes they own; operators and admins write for any user and must give a reason. The write itself
is :meth:`MemoryService.enter_memory` / :meth:`MemoryService.revise_entry`: the tools' write path,
with the source rule described in docs/write-path.md ("Written in the admin app").
"""

from __future__ import annotations

from memory_core.errors import InvalidInputError, PermissionDeniedError
from memory_core.service.app_entries import ENTRY_TYPES, entered_by

from ..auth.accounts import Identity
from .actions import require, visible_record

__all__ = ["ENTRY_TYPES", "can_revise", "entered_by", "provenance", "revise_memory", "source_for", "write_memory"]


def source_for(identity: Identity) -> str:
    """The source kind an entry by ``identity`` gets (shown beside the form before writing)."""
    return "user_statement" if identity.role == "user" else "system"


def write_memory(service, identity: Identity, *, user_id: str | None, content: str, reason: str | None,
                 type: str = "semantic", attribute: str | None = None):
    """Write a memory about ``user_id`` (a user: always themselves); returns the ``WriteOutcome``."""
    require(identity, "write_memory")
    as_user = identity.role == "user"
    if as_user:
        if user_id and user_id.strip() and user_id.strip() != identity.user_id:
            raise PermissionDeniedError("you may write memories about yourself only")
        user_id = identity.user_id
    elif not (user_id or "").strip():
        raise InvalidInputError("choose the user this memory is about", field="user_id")
    return service.enter_memory(user_id=user_id, content=content, actor=identity.actor, as_user=as_user,
                                reason=reason, type=type, attribute=attribute)


def can_revise(identity: Identity, record) -> bool:
    """Whether the edit form is offered for ``record`` (the core still checks the claim rules)."""
    return (identity.can("write_memory") and record.status in ("provisional", "confirmed") and record.type != "episodic"
            and identity.owns_scope(record.scope))


def revise_memory(service, identity: Identity, record_id: str, content: str, reason: str | None):
    """A new version of a record with the person's text as content and evidence; returns the ``WriteOutcome``."""
    require(identity, "write_memory")
    record = visible_record(service, identity, record_id)
    if not identity.owns_scope(record.scope):
        raise PermissionDeniedError(f"record {record_id} is not in a scope you own")
    return service.revise_entry(record.id, content=content, actor=identity.actor, as_user=identity.role == "user",
                                reason=reason)


def provenance(record) -> str | None:
    """"Entered by ui:alice in the admin app" for an app entry, else None."""
    who = entered_by(record)
    return f"Entered by {who} in the admin app ({record.source_kind})." if who else None
