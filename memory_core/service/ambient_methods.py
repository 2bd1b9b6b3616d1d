"""The ambient half of the :class:`~memory_core.service.MemoryService` facade (docs/ambient.md).

A mixin like :class:`~memory_core.service.extraction_methods.ExtractionMethods`: profiles are
assembled by ``retrieve.ambient`` under the rules of ``policy.ambient``; decisions and each
session's recorded prefix are stored by ``store.ambient``.
"""

from __future__ import annotations

from typing import Any

from ..clock import Clock, format_ts
from ..errors import InvalidInputError, NotFoundError, PolicyError
from ..inputs import check_text
from ..policy.ambient import AMBIENT, CANDIDATE, DECISIONS, REFUSED, REMOVED, AmbientStatus, ambient_status
from ..retrieve.ambient import AmbientProfile, assemble_profile, classified_records
from ..settings import Settings
from ..store import ambient as ambient_store
from ..store.db import Store
from ..store.records import Record

# Which decision is open from which state (anything else is refused with the reason).
_ALLOWED_FROM = {
    "approved": (CANDIDATE, REFUSED),
    "refused": (CANDIDATE, AMBIENT),
    "removed": (AMBIENT, CANDIDATE),
    "restored": (REMOVED,),
}
MAX_REASON_CHARS = 1000


class AmbientMethods:
    """Ambient profiles: preview, decisions, and the prefix recorded on each session."""

    # Provided by MemoryService.
    store: Store
    clock: Clock
    settings: Settings

    # (and the methods access and record)

    def ambient_profile(self, agent_id: str, user_id: str) -> AmbientProfile:
        """The profile a session of (agent, user) starting now would get, within the configured bounds."""
        access = self.access(agent_id, user_id)
        limits = self.settings.ambient
        return assemble_profile(self.store, user_id=user_id, readable=access.readable, max_items=limits.max_items,
                                max_tokens=limits.max_tokens, now=format_ts(self.clock.now()))

    def ambient_records(self, user_id: str | None = None) -> list[tuple[Record, AmbientStatus]]:
        """Records with a response-shaping attribute and their ambient status: one user's own
        (``user_id``), or every scope's (reviewers)."""
        from ..policy.scopes import validate_id

        now = format_ts(self.clock.now())
        if user_id is None:
            return classified_records(self.store, [], now=now)
        validate_id(user_id, "user_id")
        scopes = [f"user:{user_id}"] + ambient_store.private_agent_scopes(self.store, user_id)
        return classified_records(self.store, scopes, user_id=user_id, now=now)

    def ambient_candidates(self) -> list[tuple[Record, AmbientStatus]]:
        """Records waiting for a reviewer's approval or refusal (the review queue's ambient tab)."""
        return [(r, s) for r, s in self.ambient_records() if s.state == CANDIDATE]

    def ambient_status(self, record_id: str, user_id: str | None = None) -> AmbientStatus:
        """One record's ambient state and why."""
        record = self.record(record_id)
        decision = ambient_store.latest_decisions(self.store, [record.lineage_id]).get(record.lineage_id)
        return ambient_status(record, decision, user_id)

    def decide_ambient(self, record_id: str, decision: str, *, actor: str, reason: str | None = None,
                       user_id: str | None = None) -> AmbientStatus:
        """Record a person's decision on a record's place in the ambient profile; returns the new status.

        ``approved``/``refused``: a reviewer on this version. ``removed``/``restored``: the user (pass
        ``user_id`` to check the record is theirs) on the whole lineage. A decision that does not
        apply to the record's current state is refused and nothing is written.
        """
        if decision not in DECISIONS:
            raise InvalidInputError(f"decision must be one of {', '.join(DECISIONS)}", field="decision")
        if not isinstance(actor, str) or not actor.strip():
            raise InvalidInputError("a decision needs the actor who made it", field="actor")
        if reason is not None:
            if not isinstance(reason, str) or len(reason) > MAX_REASON_CHARS:
                raise InvalidInputError(f"reason must be text of at most {MAX_REASON_CHARS} characters", field="reason")
            check_text(reason, "reason")
        record = self.record(record_id)
        if record.status in ("superseded", "expired", "deleted"):
            raise NotFoundError(f"record {record_id} is {record.status}; decide on its current version")
        current = self.ambient_status(record_id, user_id)
        if current.state not in _ALLOWED_FROM[decision]:
            raise PolicyError(f"cannot mark record {record_id} {decision}: it is {current.state} ({current.reason})",
                              record_id=record_id, state=current.state)
        ambient_store.add_decision(self.store, lineage_id=record.lineage_id, record_id=record.id, version=record.version,
                                   decision=decision, actor=actor, at=format_ts(self.clock.now()), reason=reason)
        return self.ambient_status(record_id, user_id)

    def ambient_history(self, record_id: str) -> list[dict[str, Any]]:
        """Every ambient decision on the record's lineage, oldest first."""
        return ambient_store.decision_history(self.store, self.record(record_id).lineage_id)

    # -- the prefix a session's model received ---------------------------------------------------

    def open_session_context(self, session: Any, *, policy: str, memory_tools: list[dict[str, Any]],
                             ambient: bool, framework: str | None = None, trigger_mode: str | None = None) -> dict[str, Any]:
        """The recorded prefix of ``session``: recorded now (with a freshly assembled profile when
        ``ambient``) unless the session already has one, which is then returned unchanged, so a
        resumed session keeps the profile it started with."""
        existing = ambient_store.session_context(self.store, session.id)
        if existing is not None:
            return existing
        profile = self.ambient_profile(session.agent_id, session.user_id) if ambient else None
        ambient_store.insert_context(self.store, {
            "session_id": session.id, "recorded_at": format_ts(self.clock.now()), "framework": framework,
            "trigger_mode": trigger_mode, "policy": policy, "ambient_enabled": int(bool(ambient)),
            "profile_text": profile.text if profile else None,
            "profile_items": profile.to_dict()["items"] if profile else [],
            "profile_excluded": profile.excluded if profile else [],
            "profile_limits": profile.limits if profile else {},
            "memory_tools": memory_tools,
        })
        recorded = ambient_store.session_context(self.store, session.id)
        if recorded is None:  # inserted above or by a concurrent opener; only a missing session lands here
            raise NotFoundError(f"no session {session.id} to record a prefix on")
        return recorded

    def record_model_view(self, session_id: str, *, system_text: str, offered_tools: list[dict[str, Any]]) -> bool:
        """Keep the system text and tool list of a session's first model call (later calls are identical)."""
        return ambient_store.record_model_view(self.store, session_id, system_text=system_text,
                                               offered_tools=offered_tools, at=format_ts(self.clock.now()))

    def session_context(self, session_id: str) -> dict[str, Any] | None:
        """A session's recorded prefix (policy, profile items, tools, system text), or None."""
        return ambient_store.session_context(self.store, session_id)
