"""Named queries of an as-of search: which records the memory held, or held valid, at an instant.

Versions are rows of ``records`` (a revision is a new row whose ``supersedes_id`` names the old
one, and the old row keeps its content with ``superseded_by_id`` set), so the memory's state at an
instant ``T`` can be read off the rows themselves:

- **memory** ("what did the memory hold at T"): a row created at or before T, never forgotten
  (``deleted`` rows are excluded at every instant: a forget erases, and no version or history row
  brings a record back), not yet superseded at T (its successor was created after T), not yet
  expired at T (a provisional record counts as gone from its ``expires_at`` on, as a live search
  treats it; an expired row without one from when it was marked).
- **world** ("what was valid in the world at T", as the memory now believes): a row not forgotten
  and not expired, whose validity contains T. A row's validity starts at ``valid_from``; without
  one, at the beginning of time for a first version, and when it was written for a revision (it
  replaced something that held until then). It ends (exclusive) at ``valid_until``; without one,
  when its successor's validity starts, or never.

The retrieval layer renders these as part of its hard filter (:func:`as_of_predicate`), so every
generator, the dense one included, sees only the as-of set.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .db import Store

AS_OF_MODES = ("memory", "world")
# The statuses each mode may reach (the rest of the rule is in the predicate).
AS_OF_STATUSES = {"memory": ("provisional", "confirmed", "superseded", "expired"),
                  "world": ("provisional", "confirmed", "superseded")}


def as_of_predicate(alias: str, at: str, mode: str) -> tuple[str, list[Any]]:
    """The as-of rule of ``mode`` at ``at`` as a WHERE fragment over ``records AS alias``."""
    a = alias
    if mode == "memory":
        sql = (
            f"{a}.status != 'deleted' AND {a}.created_at <= ? "
            f"AND NOT EXISTS (SELECT 1 FROM records nxt WHERE nxt.id = {a}.superseded_by_id AND nxt.created_at <= ?) "
            f"AND NOT ({a}.status = 'superseded' AND {a}.superseded_by_id IS NULL AND {a}.updated_at <= ?) "
            f"AND NOT ({a}.status IN ('provisional', 'superseded', 'expired') AND {a}.expires_at IS NOT NULL AND {a}.expires_at <= ?) "
            f"AND NOT ({a}.status = 'expired' AND {a}.expires_at IS NULL AND {a}.updated_at <= ?)"
        )
        return f"({sql})", [at, at, at, at, at]
    if mode == "world":
        sql = (
            f"{a}.status IN ('provisional', 'confirmed', 'superseded') "
            f"AND (({a}.valid_from IS NOT NULL AND {a}.valid_from <= ?) "
            f"OR ({a}.valid_from IS NULL AND ({a}.supersedes_id IS NULL OR {a}.created_at <= ?))) "
            f"AND ({a}.valid_until IS NULL OR {a}.valid_until > ?) "
            f"AND NOT ({a}.valid_until IS NULL AND EXISTS (SELECT 1 FROM records nxt WHERE nxt.id = {a}.superseded_by_id "
            f"AND nxt.status != 'deleted' AND COALESCE(nxt.valid_from, nxt.created_at) <= ?))"
        )
        return f"({sql})", [at, at, at, at]
    raise ValueError(f"unknown as-of mode {mode!r}")


def admitted_seqs(store: Store, where: str, params: Sequence[Any]) -> set[int]:
    """The seqs of the records a hard filter's WHERE fragment (over ``records r``) admits."""
    with store.lock:
        return {row[0] for row in store.conn.execute(f"SELECT r.seq FROM records r WHERE {where}", list(params)).fetchall()}


def statuses_at(store: Store, record_ids: Sequence[str], at: str) -> dict[str, str]:
    """The status each listed record (live at ``at``) had then: ``confirmed`` if it was written
    confirmed or promoted at or before ``at``, else ``provisional``. From the event log, whose
    ``record.created`` payload holds the status a record was written with; a record the log has
    no ``record.created`` event for is left out (the caller keeps what it knows)."""
    if not record_ids:
        return {}
    marks = ",".join("?" * len(record_ids))
    with store.lock:
        rows = store.conn.execute(
            f"SELECT record_id, kind, at, payload FROM events WHERE record_id IN ({marks}) "
            "AND kind IN ('record.created', 'record.promoted')", list(record_ids)).fetchall()
    created: dict[str, str] = {}
    promoted: set[str] = set()
    for row in rows:
        if row["kind"] == "record.promoted" and row["at"] <= at:
            promoted.add(row["record_id"])
        elif row["kind"] == "record.created":
            payload = row["payload"]
            try:
                written = (payload if isinstance(payload, dict) else json.loads(payload or "{}")).get("status")
            except (AttributeError, TypeError, ValueError):
                written = None
            created[row["record_id"]] = "confirmed" if written == "confirmed" else "provisional"
    return {rid: "confirmed" if rid in promoted else status for rid, status in created.items()}
