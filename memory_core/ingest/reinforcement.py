"""Applying a reinforcement: the rule is :func:`memory_core.policy.rules.plan_reinforcement`;
this writes its field changes, bumps the change feed and appends the event. Used by the write
path (a repeated claim) and by ``memory_revise confirm`` / a person's confirmation."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..clock import format_ts, parse_ts
from ..policy.rules import Observation, Reinforcement, plan_reinforcement
from ..settings import WriteSettings
from ..store.db import Store
from ..store.records import Record, fetch_record, update_record


def apply_reinforcement(
    conn, store: Store, record: Record, observation: Observation, *, now: datetime, settings: WriteSettings,
    actor: str, reason: str, evidence: dict[str, Any] | None = None,
) -> tuple[Record, Reinforcement]:
    """Reinforce ``record`` inside the caller's transaction; ``evidence`` (evidence, session, turn)
    replaces the record's own when the observation's source is stronger."""
    plan = plan_reinforcement(
        status=record.status, source_kind=record.source_kind, confidence=record.confidence,
        observations=record.observations, expires_at=parse_ts(record.expires_at),
        last_observed_session=record.last_observed_session, observation=observation, now=now,
        promote_after=settings.promote_after_observations, extension_days=settings.reinforcement_extension_days,
    )
    fields = dict(plan.fields)
    if "expires_at" in fields and fields["expires_at"] is not None:
        fields["expires_at"] = format_ts(fields["expires_at"])
    if "source_kind" in fields and evidence:
        fields.update(evidence)
    at = format_ts(now)
    fields["updated_at"] = at
    update_record(conn, record.id, **fields)
    store.bump(conn, record.seq)
    store.append_event(
        conn, at=at, kind="record.promoted" if plan.promoted else "record.reinforced", actor=actor, record_id=record.id,
        reason=reason, payload={"observations": fields["observations"], "independent": plan.independent,
                                "person": observation.person, "evidenced": observation.evidenced,
                                "by_agent": observation.agent_id, "session": observation.session_id},
    )
    updated = fetch_record(conn, record.id)
    assert updated is not None
    return updated, plan
