"""The ambient profile's data: a user's profile items with their state, and the decisions on them.

Decisions go through ``MemoryService.decide_ambient`` (recorded in ``ambient_decisions`` with an
audit event); the roles and ownership checks are here.
"""

from __future__ import annotations

from typing import Any

from memory_core.errors import PermissionDeniedError
from memory_core.policy.ambient import AMBIENT, CANDIDATE, REFUSED, REMOVED

from ..auth.accounts import Identity
from .actions import require

__all__ = ["AMBIENT", "CANDIDATE", "REMOVED", "STATE_LABELS"]

STATE_LABELS = {AMBIENT: "in your profile", CANDIDATE: "waiting for a reviewer", REFUSED: "refused by a reviewer",
                REMOVED: "removed by you"}


def profile_rows(service, user_id: str) -> list[dict[str, Any]]:
    """A user's records that are, could be, or were in their ambient profile (ineligible ones left out)."""
    rows = []
    for record, status in service.ambient_records(user_id):
        if status.state in STATE_LABELS:
            rows.append({"record": record.id, "text": record.content, "state": STATE_LABELS[status.state],
                         "category": status.category, "version": record.version, "scope": record.scope,
                         "why": status.reason, "_state": status.state})
    return rows


def remove_item(service, identity: Identity, record_id: str, reason: str):
    """The signed-in user takes one of their records out of every future profile."""
    _own(identity)
    return service.decide_ambient(record_id, "removed", actor=identity.actor, reason=reason, user_id=identity.user_id)


def restore_item(service, identity: Identity, record_id: str, reason: str):
    """Undo a removal: the record may enter future profiles again."""
    _own(identity)
    return service.decide_ambient(record_id, "restored", actor=identity.actor, reason=reason, user_id=identity.user_id)


def review_decision(service, identity: Identity, record_id: str, decision: str, reason: str):
    """A reviewer approves or refuses an ambient candidate (this version)."""
    require(identity, "review")
    if decision not in ("approved", "refused"):
        raise ValueError(f"a reviewer approves or refuses, not {decision!r}")
    return service.decide_ambient(record_id, decision, actor=identity.actor, reason=reason)


def ambient_candidates(service) -> list:
    """(record, status) pairs waiting for a reviewer's approval or refusal."""
    return service.ambient_candidates()


def _own(identity: Identity) -> None:
    if identity.role != "user" or not identity.user_id:
        raise PermissionDeniedError("only the user a profile belongs to can change it", role=identity.role)
