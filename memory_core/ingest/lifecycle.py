"""Lifecycle operations on existing records and entities: confirm, forget, merge, clear a review flag.

(New versions go through :meth:`Ingestor.write` with ``revises`` set, so a revision obeys every
write rule.) Each operation is one transaction that also appends its event; callers check
permissions before calling.
"""

from __future__ import annotations

from typing import Any

from ..clock import Clock, format_ts, parse_ts
from ..errors import ConflictError, InvalidInputError, NotFoundError
from ..inputs import check_text, parse_input_ts
from ..settings import HousekeepingSettings, WriteSettings
from ..store.db import ERASURE_LOCK, Store, dumps, loads
from ..store import lifecycle_queries as queries
from ..store.write_queries import link_record_entity
from ..store.lock_scopes import entity_scopes, merge_scopes, record_scopes, scope_of_record
from ..store.records import LIVE_STATUSES, Record, fetch_record, fetch_records, fts_sync, update_record
from ..telemetry import NO_TELEMETRY, Telemetry, spans
from ..policy.rules import Observation
from .entity_resolution import add_alias
from .erasure import ErasurePlan, apply_erasure, plan_erasure
from .evidence import locate_quote
from .reinforcement import apply_reinforcement


class Lifecycle:
    def __init__(self, store: Store, index, settings: WriteSettings, clock: Clock, housekeeping: HousekeepingSettings | None = None,
                 telemetry: Telemetry = NO_TELEMETRY) -> None:
        self.telemetry = telemetry  # one span per forget when the host traces (telemetry/spans.py)
        self.store = store
        self.index = index
        self.settings = settings
        self.clock = clock
        self.housekeeping = housekeeping or HousekeepingSettings()

    def _now(self) -> str:
        return format_ts(self.clock.now())

    # -- confirm / reinforce --------------------------------------------------------------------

    def confirm(self, record_id: str, *, actor: str, reason: str, session_id: str | None = None, promote: bool = False,
                agent_id: str | None = None, evidence: str | None = None) -> Record:
        """Reinforce a live record.

        ``promote`` (a person confirming it) makes it confirmed at once. An agent's confirmation
        counts toward promotion only from another session and with ``evidence`` found in that
        session's transcript (a user or tool turn): the rule is ``policy.rules.is_independent``.
        """
        check_text(reason, "reason")
        check_text(evidence, "evidence")
        now_dt = self.clock.now()
        with self.store.transaction(scope_of_record(self.store, record_id) or None) as conn:
            record = fetch_record(conn, record_id)
            if record is None or record.status == "deleted":
                raise NotFoundError(f"no record {record_id}", record_id=record_id)
            if record.status not in LIVE_STATUSES:
                raise ConflictError(f"record {record_id} is {record.status}; only live records can be confirmed", status=record.status)
            evidenced = False
            if evidence and session_id:
                # Only the user's or a tool's words count: an agent quoting itself is no evidence.
                evidenced = bool(locate_quote(conn, session_id, evidence, "user") or locate_quote(conn, session_id, evidence, "tool"))
            observation = Observation(session_id=session_id, agent_id=agent_id, source_kind="agent_inference",
                                      evidenced=evidenced, person=promote)
            apply_reinforcement(conn, self.store, record, observation, now=now_dt, settings=self.settings,
                                actor=actor, reason=reason)
        self.index.refresh()
        updated = self.get(record_id)
        assert updated is not None
        return updated

    # -- forget -----------------------------------------------------------------------------------

    def forget_preview(self, record_id: str) -> ErasurePlan:
        """What forgetting ``record_id`` would erase, place by place (nothing is written)."""
        with self.store.lock:
            record = fetch_record(self.store.conn, record_id)
            if record is None or record.status == "deleted":
                raise NotFoundError(f"no record {record_id}", record_id=record_id)
            return plan_erasure(self.store.conn, record)

    def forget(self, record_id: str, *, actor: str, reason: str) -> list[str]:
        """Tombstone a record and the earlier versions of its lineage, and every live record that
        states the same fact from the same evidence, and erase them everywhere (:meth:`erase`).
        Returns the ids tombstoned."""
        return self.erase(record_id, actor=actor, reason=reason).record_ids

    def erase(self, record_id: str, *, actor: str, reason: str) -> ErasurePlan:
        """Forget ``record_id`` and return the plan applied (each record with why it went).

        One transaction erases what :func:`plan_erasure` finds (records, transcript spans,
        summaries, candidates, logs, entity names), deletes the FTS rows and merges the FTS
        index so the terms leave its pages (rebuilding it every ``housekeeping.fts_rebuild_every``
        forgets, see docs/store.md). Afterwards the WAL is truncated without waiting for
        readers; if a reader's snapshot still needs the old pages, a background retry erases
        them as soon as it lets go.
        """
        with spans.forget(self.telemetry, record_id) as span:
            plan = self._erase(record_id, actor=actor, reason=reason)
            spans.forget_done(span, plan)
        return plan

    def _erase(self, record_id: str, *, actor: str, reason: str) -> ErasurePlan:
        if not reason or not reason.strip():
            raise InvalidInputError("forgetting a record needs a reason", field="reason")
        check_text(reason, "reason")
        now = self._now()

        def forget_in(conn) -> ErasurePlan:
            record = fetch_record(conn, record_id)
            if record is None or record.status == "deleted":
                raise NotFoundError(f"no record {record_id}", record_id=record_id)
            plan = plan_erasure(conn, record)
            # every scope the plan changes (a session summary may be in another one) must be locked
            self.store.require_scopes(record_scopes(conn, plan.record_ids) | entity_scopes(conn, [e["id"] for e in plan.entities]))
            seqs = queries.seqs_of(conn, plan.record_ids)
            apply_erasure(conn, plan, now=now)
            for target_id in plan.record_ids:
                queries.delete_fts_row(conn, seqs[target_id])
                self.store.bump(conn, seqs[target_id], "delete")
                self.store.append_event(conn, at=now, kind="record.forgotten", actor=actor, record_id=target_id, reason=reason,
                                        payload={"requested": record_id})
            if self.store.backend == "postgresql":
                self.store.mark_erase_pending(conn)  # GIN keys and dead tuples go in the erasure pass
            else:
                self._erase_fts_terms(conn)
            return plan

        plan = self.store.run_locked(scope_of_record(self.store, record_id) | {ERASURE_LOCK}, forget_in)
        self.index.refresh()
        self.store.erase_soon(self.housekeeping.erase_retry_s)
        return plan

    def _erase_fts_terms(self, conn) -> None:
        # Deleting an FTS5 row only adds a tombstone segment; the terms stay in the older
        # segment until both are merged. 'optimize' merges everything (cheap: ~0.1 s at 50K
        # records) but stacks one more level on the index structure each time, and SQLite 3.40
        # reports the index malformed after about a thousand; 'rebuild' re-indexes from the
        # stored text (~0.3-1 s at 50K) and leaves a single level, so it runs every N forgets.
        count = queries.fts_forgets_since_rebuild(conn) + 1
        rebuild = count >= self.housekeeping.fts_rebuild_every
        queries.merge_fts_segments(conn, rebuild)
        queries.set_fts_forgets_since_rebuild(conn, 0 if rebuild else count)

    # -- review flags -----------------------------------------------------------------------------

    def clear_review_flag(self, record_id: str, *, actor: str, reason: str, next_review_at: str | None = None) -> Record:
        """A reviewer's decision that a review_due flag needs no change to the record."""
        if not reason or not reason.strip():
            raise InvalidInputError("clearing a review flag needs a reason", field="reason")
        check_text(reason, "reason")
        now = self._now()
        with self.store.transaction(scope_of_record(self.store, record_id) or None) as conn:
            record = fetch_record(conn, record_id)
            if record is None or record.status == "deleted":
                raise NotFoundError(f"no record {record_id}", record_id=record_id)
            if record.review_flagged_at is None:
                raise ConflictError(f"record {record_id} has no review flag to clear")
            update_record(conn, record_id, review_flagged_at=None, review_reason=None,
                          review_at=format_ts(parse_input_ts(next_review_at, "next_review_at")) if next_review_at else None, updated_at=now)
            self.store.bump(conn, record.seq)
            self.store.append_event(conn, at=now, kind="record.review_cleared", actor=actor, record_id=record_id, reason=reason,
                                    payload={"flagged_at": record.review_flagged_at, "next_review_at": next_review_at})
        updated = self.get(record_id)
        assert updated is not None
        return updated

    # -- entity merge -----------------------------------------------------------------------------

    def merge_preview(self, source_id: str, target_id: str) -> dict[str, Any]:
        """Exactly what merging ``source_id`` into ``target_id`` would change (nothing is written)."""
        conn = self.store.conn
        with self.store.lock:
            source, target = queries.entity_row(conn, source_id), queries.entity_row(conn, target_id)
            if source is None or target is None:
                raise NotFoundError("both entities must exist", source=source_id, target=target_id)
            if source_id == target_id:
                raise InvalidInputError("an entity cannot be merged into itself")
            if source["status"] == "merged" or target["status"] == "merged":
                raise ConflictError("one of the entities has already been merged")
            if (source["scope_kind"], source["scope_id"]) != (target["scope_kind"], target["scope_id"]):
                raise ConflictError(
                    "entities in different scopes are never merged: a false merge would leak records across owners",
                    source_scope=f"{source['scope_kind']}:{source['scope_id']}",
                    target_scope=f"{target['scope_kind']}:{target['scope_id']}",
                )
            linked = queries.entity_links(conn, source_id)
            subject_rows = queries.records_with_subject_entity(conn, source_id)
            source_aliases, target_aliases = queries.entity_aliases(conn, source_id), queries.entity_aliases(conn, target_id)
            subject_changes = []
            collisions = []
            for row in subject_rows:
                new_subject = f"{target_id}:{row['attribute']}" if row["attribute"] else None
                subject_changes.append({"record_id": row["id"], "old_subject": row["subject"], "new_subject": new_subject})
                if new_subject and row["status"] in LIVE_STATUSES:
                    clash = queries.live_ids_with_subject(conn, new_subject)
                    collisions.extend({"record_id": row["id"], "now_shares_subject_with": other} for other in clash)
        return {
            "source": dict(source), "target": dict(target),
            "relinked_records": [dict(r) for r in linked],
            "subject_changes": subject_changes,
            "aliases_moved": [a for a in source_aliases if a.casefold() not in {t.casefold() for t in target_aliases}],
            "subject_collisions": collisions,
        }

    def merge_entities(self, source_id: str, target_id: str, *, actor: str, reason: str) -> dict[str, Any]:
        """Merge ``source_id`` into ``target_id`` in one audited transaction; returns the preview applied."""
        if not reason or not reason.strip():
            raise InvalidInputError("a merge needs a reason", field="reason")
        check_text(reason, "reason")
        now = self._now()
        with self.store.lock:
            scopes = merge_scopes(self.store.conn, source_id, target_id)
        return self.store.run_locked(scopes, lambda conn: self._merge_in(conn, source_id, target_id, now, actor, reason))

    def _merge_in(self, conn, source_id: str, target_id: str, now: str, actor: str, reason: str) -> dict[str, Any]:
        # the entities' scope and every scope whose records the merge relinks, locked before reading
        self.store.require_scopes(merge_scopes(conn, source_id, target_id))
        preview = self.merge_preview(source_id, target_id)
        for alias in queries.entity_aliases(conn, source_id):
            add_alias(conn, target_id, alias)
        for link in preview["relinked_records"]:
            link_record_entity(conn, link["record_id"], target_id, link["role"])
        queries.drop_entity_links(conn, source_id)
        for change in preview["subject_changes"]:
            queries.set_record_subject(conn, change["record_id"], target_id, change["new_subject"], now)
        for collision in preview["subject_collisions"]:
            for a, b in ((collision["record_id"], collision["now_shares_subject_with"]), (collision["now_shares_subject_with"], collision["record_id"])):
                current = loads(queries.conflicts_json(conn, a), [])
                if b not in current:
                    queries.set_conflicts_json(conn, a, dumps([*current, b]))
        queries.mark_entity_merged(conn, source_id, target_id)
        affected = {link["record_id"] for link in preview["relinked_records"]} | {c["record_id"] for c in preview["subject_changes"]}
        for record_id in sorted(affected):
            fts_sync(conn, queries.seqs_of(conn, [record_id])[record_id])
        self.store.append_event(conn, at=now, kind="entity.merged", actor=actor, entity_id=target_id, reason=reason,
                                payload={"source": source_id, "target": target_id, "records": sorted(affected),
                                         "aliases_moved": preview["aliases_moved"]})
        return preview

    def get(self, record_id: str) -> Record | None:
        with self.store.lock:
            return fetch_record(self.store.conn, record_id)
