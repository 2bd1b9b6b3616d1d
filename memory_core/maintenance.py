"""Time-driven passes run by the worker: due-review flags (path C), provisional expiry, and
(at most every ``housekeeping.prune_interval_s``) the log retention pass of :mod:`memory_core.store.retention`.

Both are single UPDATE ... RETURNING statements inside a write transaction, so the selection and
the change are one atomic step: two workers running the same pass at the same moment flag or
expire each record once, and running a pass again changes nothing. Neither pass touches content,
evidence or source kind. A review flag only says "this dated claim is due for another look"; it
never promotes a record or concludes that a planned event happened. Clearing it is a reviewer's
action with a reason (:meth:`Lifecycle.clear_review_flag`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .clock import Clock, format_ts
from .index.vector_index import VectorIndex
from .settings import HousekeepingSettings
from .store import lifecycle_queries as queries
from .store.db import Store
from .store.retention import prune_if_due


@dataclass
class MaintenanceReport:
    """What one maintenance pass changed."""

    at: str
    review_flagged: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    pruned: dict[str, int] = field(default_factory=dict)  # log rows deleted by retention, if a prune pass ran

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "review_flagged": self.review_flagged, "expired": self.expired, "pruned": self.pruned}


def _reason(row) -> str:
    what = f"its review date {row['review_at'][:10]} has arrived"
    if row["valid_until"] and row["valid_until"] <= row["review_at"]:
        what += f" (stated valid until {row['valid_until'][:10]})"
    return (f"{what}; the dated claim may no longer hold or the planned event may or may not have happened. "
            "Nothing was changed: confirm, revise or clear the flag with a reason.")


def flag_due_reviews(store: Store, clock: Clock, batch: int, *, actor: str = "maintenance") -> list[str]:
    """Flag live records whose review_at has passed and that are not flagged yet; returns their ids."""
    now = format_ts(clock.now())
    flagged: list[str] = []
    while True:
        with store.transaction() as conn:
            due = queries.due_reviews(conn, now, batch)
            if not due:
                return flagged
            for row in due:
                reason = _reason(row)
                seq = queries.flag_for_review(conn, row["id"], reason, now)
                if seq is None:
                    continue
                store.bump(conn, seq)
                store.append_event(conn, at=now, kind="record.review_due", actor=actor, record_id=row["id"], reason=reason,
                                   payload={"review_at": row["review_at"], "valid_until": row["valid_until"]})
                flagged.append(row["id"])
        if len(due) < batch:
            return flagged


def expire_provisional(store: Store, index: VectorIndex, clock: Clock, batch: int, *, actor: str = "maintenance") -> list[str]:
    """Move provisional records past their expires_at to ``expired``; returns their ids."""
    now = format_ts(clock.now())
    expired: list[str] = []
    while True:
        with store.transaction() as conn:
            rows = queries.expire_lapsed_provisional(conn, now, batch)
            for row in rows:
                store.bump(conn, row["seq"])
                store.append_event(conn, at=now, kind="record.expired", actor=actor, record_id=row["id"],
                                   reason="provisional and not reinforced before it expired",
                                   payload={"expires_at": row["expires_at"]})
                expired.append(row["id"])
        if len(rows) < batch:
            break
    if expired:
        index.refresh()
    return expired


def run_maintenance(store: Store, index: VectorIndex, clock: Clock, batch: int, *, actor: str = "maintenance",
                    housekeeping: HousekeepingSettings | None = None) -> MaintenanceReport:
    """Expiry first (an expired record is not worth a review), then due-review flags, then (with
    ``housekeeping``, when its interval has passed) the log retention pass."""
    report = MaintenanceReport(at=format_ts(clock.now()))
    report.expired = expire_provisional(store, index, clock, batch, actor=actor)
    report.review_flagged = flag_due_reviews(store, clock, batch, actor=actor)
    if housekeeping is not None:
        pruned = prune_if_due(store, housekeeping, clock.now(), actor=actor)
        report.pruned = pruned.deleted if pruned is not None else {}
    return report
