"""Lifecycle operations on existing records and entities: confirm, forget, merge, clear a review flag.

(New versions go through :meth:`Ingestor.write` with ``revises`` set, so a revision obeys every
write rule.) Each operation is one transaction that also appends its event; callers check
permissions before calling.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..clock import Clock, format_ts, parse_ts
from ..errors import ConflictError, InvalidInputError, NotFoundError
from ..settings import WriteSettings
from ..store.db import Store, dumps, loads
from ..store.records import LIVE_STATUSES, Record, fetch_record, fetch_records, fts_sync, update_record
from ..policy.rules import reinforced_confidence
from .entity_resolution import add_alias


class Lifecycle:
    def __init__(self, store: Store, index, settings: WriteSettings, clock: Clock) -> None:
        self.store = store
        self.index = index
        self.settings = settings
        self.clock = clock

    def _now(self) -> str:
        return format_ts(self.clock.now())

    # -- confirm / reinforce --------------------------------------------------------------------

    def confirm(self, record_id: str, *, actor: str, reason: str, session_id: str | None = None, promote: bool = False) -> Record:
        """Reinforce a live record; ``promote`` (a person confirming it) makes it confirmed at once."""
        now_dt = self.clock.now()
        now = format_ts(now_dt)
        with self.store.transaction() as conn:
            record = fetch_record(conn, record_id)
            if record is None or record.status == "deleted":
                raise NotFoundError(f"no record {record_id}", record_id=record_id)
            if record.status not in LIVE_STATUSES:
                raise ConflictError(f"record {record_id} is {record.status}; only live records can be confirmed", status=record.status)
            independent = promote or session_id is None or session_id != record.last_observed_session
            observations = record.observations + (1 if independent else 0)
            fields: dict[str, Any] = {"confidence": reinforced_confidence(record.confidence), "observations": observations, "updated_at": now}
            if session_id:
                fields["last_observed_session"] = session_id
            kind = "record.reinforced"
            if record.status == "provisional":
                if promote or observations >= self.settings.promote_after_observations:
                    fields.update(status="confirmed", expires_at=None)
                    kind = "record.promoted"
                else:
                    extended = now_dt + timedelta(days=self.settings.reinforcement_extension_days)
                    current = parse_ts(record.expires_at)
                    if current is None or extended > current:
                        fields["expires_at"] = format_ts(extended)
            update_record(conn, record_id, **fields)
            self.store.bump(conn, record.seq)
            self.store.append_event(conn, at=now, kind=kind, actor=actor, record_id=record_id, reason=reason,
                                    payload={"observations": observations, "promote": promote})
        self.index.refresh()
        updated = self.get(record_id)
        assert updated is not None
        return updated

    # -- forget -----------------------------------------------------------------------------------

    def forget(self, record_id: str, *, actor: str, reason: str) -> list[str]:
        """Tombstone a record and the earlier versions of its lineage; erase their text and vectors.

        Content, evidence and embedding are overwritten, FTS rows removed and the FTS index
        optimised, write-log and extraction copies of the text redacted, and the WAL checkpointed
        so the text does not survive in the file's bytes. Returns the ids tombstoned.
        """
        if not reason or not reason.strip():
            raise InvalidInputError("forgetting a record needs a reason", field="reason")
        now = self._now()
        with self.store.transaction() as conn:
            record = fetch_record(conn, record_id)
            if record is None or record.status == "deleted":
                raise NotFoundError(f"no record {record_id}", record_id=record_id)
            targets = fetch_records(
                conn, "r.lineage_id = ? AND r.version <= ? AND r.status != 'deleted' ORDER BY r.version DESC",
                (record.lineage_id, record.version), links=False,
            )
            ids = [t.id for t in targets]
            for target in targets:
                update_record(
                    conn, target.id, content="", evidence=None, embedding=None, embed_dim=None, tags=[],
                    status="deleted", deleted_at=now, updated_at=now, review_reason=None,
                )
                conn.execute("DELETE FROM records_fts WHERE rowid = ?", (target.seq,))
                self.store.bump(conn, target.seq, "delete")
                self.store.append_event(conn, at=now, kind="record.forgotten", actor=actor, record_id=target.id, reason=reason,
                                        payload={"requested": record_id})
            marks = ",".join("?" * len(ids))
            conn.execute(f"UPDATE write_log SET candidate = '{{\"redacted\":true}}' WHERE record_id IN ({marks})", ids)
            conn.execute(
                f"UPDATE extraction_candidates SET candidate = '{{\"redacted\":true}}', review = '{{\"redacted\":true}}' WHERE record_id IN ({marks})",
                ids,
            )
            # Merging every FTS segment drops the deleted documents' terms from the index pages;
            # secure_delete then zeroes the pages it frees.
            conn.execute("INSERT INTO records_fts(records_fts) VALUES('optimize')")
        self.index.refresh()
        with self.store.lock:
            self.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return ids

    # -- review flags -----------------------------------------------------------------------------

    def clear_review_flag(self, record_id: str, *, actor: str, reason: str, next_review_at: str | None = None) -> Record:
        """A reviewer's decision that a review_due flag needs no change to the record."""
        if not reason or not reason.strip():
            raise InvalidInputError("clearing a review flag needs a reason", field="reason")
        now = self._now()
        with self.store.transaction() as conn:
            record = fetch_record(conn, record_id)
            if record is None or record.status == "deleted":
                raise NotFoundError(f"no record {record_id}", record_id=record_id)
            if record.review_flagged_at is None:
                raise ConflictError(f"record {record_id} has no review flag to clear")
            update_record(conn, record_id, review_flagged_at=None, review_reason=None,
                          review_at=format_ts(parse_ts(next_review_at)) if next_review_at else None, updated_at=now)
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
            source = conn.execute("SELECT * FROM entities WHERE id = ?", (source_id,)).fetchone()
            target = conn.execute("SELECT * FROM entities WHERE id = ?", (target_id,)).fetchone()
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
            linked = conn.execute("SELECT record_id, role FROM record_entities WHERE entity_id = ?", (source_id,)).fetchall()
            subject_rows = conn.execute(
                "SELECT id, attribute, subject, status FROM records WHERE subject_entity_id = ?", (source_id,)
            ).fetchall()
            source_aliases = [r["alias"] for r in conn.execute("SELECT alias FROM entity_aliases WHERE entity_id = ?", (source_id,))]
            target_aliases = [r["alias"] for r in conn.execute("SELECT alias FROM entity_aliases WHERE entity_id = ?", (target_id,))]
            subject_changes = []
            collisions = []
            for row in subject_rows:
                new_subject = f"{target_id}:{row['attribute']}" if row["attribute"] else None
                subject_changes.append({"record_id": row["id"], "old_subject": row["subject"], "new_subject": new_subject})
                if new_subject and row["status"] in LIVE_STATUSES:
                    clash = conn.execute(
                        "SELECT id FROM records WHERE subject = ? AND status IN ('provisional','confirmed')", (new_subject,)
                    ).fetchall()
                    collisions.extend({"record_id": row["id"], "now_shares_subject_with": c["id"]} for c in clash)
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
        now = self._now()
        with self.store.transaction() as conn:
            preview = self.merge_preview(source_id, target_id)
            for row in conn.execute("SELECT alias FROM entity_aliases WHERE entity_id = ?", (source_id,)).fetchall():
                add_alias(conn, target_id, row["alias"])
            for link in preview["relinked_records"]:
                conn.execute(
                    "INSERT INTO record_entities (record_id, entity_id, role) VALUES (?,?,?) "
                    "ON CONFLICT(record_id, entity_id) DO UPDATE SET role = CASE WHEN excluded.role = 'subject' THEN 'subject' ELSE record_entities.role END",
                    (link["record_id"], target_id, link["role"]),
                )
            conn.execute("DELETE FROM record_entities WHERE entity_id = ?", (source_id,))
            for change in preview["subject_changes"]:
                conn.execute("UPDATE records SET subject_entity_id = ?, subject = ?, updated_at = ? WHERE id = ?",
                             (target_id, change["new_subject"], now, change["record_id"]))
            for collision in preview["subject_collisions"]:
                for a, b in ((collision["record_id"], collision["now_shares_subject_with"]), (collision["now_shares_subject_with"], collision["record_id"])):
                    row = conn.execute("SELECT conflicts_with FROM records WHERE id = ?", (a,)).fetchone()
                    current = loads(row["conflicts_with"], [])
                    if b not in current:
                        conn.execute("UPDATE records SET conflicts_with = ? WHERE id = ?", (dumps([*current, b]), a))
            conn.execute("UPDATE entities SET status = 'merged', merged_into = ? WHERE id = ?", (target_id, source_id))
            affected = {link["record_id"] for link in preview["relinked_records"]} | {c["record_id"] for c in preview["subject_changes"]}
            for record_id in sorted(affected):
                seq = conn.execute("SELECT seq FROM records WHERE id = ?", (record_id,)).fetchone()["seq"]
                fts_sync(conn, seq)
            self.store.append_event(conn, at=now, kind="entity.merged", actor=actor, entity_id=target_id, reason=reason,
                                    payload={"source": source_id, "target": target_id, "records": sorted(affected),
                                             "aliases_moved": preview["aliases_moved"]})
        return preview

    def get(self, record_id: str) -> Record | None:
        with self.store.lock:
            return fetch_record(self.store.conn, record_id)
