"""The part of the write path only an import uses: a record keeps what its file says of it.

An imported record runs every stage of a write (permission, duplicate search, contradiction
check, entity resolution); when it is created rather than folded into an existing record, these
functions give it the file's id (when free), times, status, confidence and lineage, and insert
its earlier versions as the superseded history they were. The source kind is never taken from
here: the importer caps it before the write (an import never raises a record's rank).
"""

from __future__ import annotations

from dataclasses import replace

from ..store.records import Record, fts_sync, insert_record, update_record
from .entity_resolution import link
from .procedures import store_procedure
from .write_types import ImportedFields

KEPT = ("id", "version", "lineage_id", "supersedes_id", "superseded_by_id", "created_at", "updated_at", "event_at", "expires_at",
        "review_at", "review_flagged_at", "review_reason", "confidence", "status", "observations", "last_observed_session",
        "source_ref", "creator_agent_id", "evidence_session_id", "evidence_turn")
FINAL = ("updated_at", "review_flagged_at", "review_reason", "status", "superseded_by_id")  # set again after the write's own changes


def apply_imported(record: Record, imported: ImportedFields) -> Record:
    """``record`` as the write path built it, with the file's fields over it."""
    kept = {name: imported.fields[name] for name in KEPT if name in imported.fields}
    file_conflicts = [c for c in imported.fields.get("conflicts_with") or [] if c not in record.conflicts_with]
    kept["conflicts_with"] = [*file_conflicts, *record.conflicts_with]  # the file's, then any with the store's own records
    if kept.get("status") == "superseded" and not kept.get("superseded_by_id"):
        kept.pop("status")  # superseded by nothing the file holds: it stays live here
    return replace(record, **kept)


def finish_import(conn, store, imported: ImportedFields, record: Record) -> None:
    """Inside the record's transaction: its earlier versions, then the file's final field values."""
    file_id = imported.fields.get("id")
    imported.created.add(record.id)
    for version in imported.history:
        old = Record(**{k: v for k, v in version.items() if not k.startswith("_")})
        if old.superseded_by_id == file_id:
            old.superseded_by_id = record.id  # the head was given a new id (the file's was taken)
        old.subject_entity_id, old.subject = record.subject_entity_id, record.subject
        old.embed_model, old.embed_version = record.embed_model, record.embed_version
        insert_record(conn, old, version.get("_vector"))
        imported.created.add(old.id)
        for entity_id, role in version.get("_links", []):
            link(conn, old.id, entity_id, role)
        if version.get("_procedure"):
            store_procedure(conn, old.id, version["_procedure"])
        fts_sync(conn, old.seq)
        store.bump(conn, old.seq)
    final = {name: imported.fields[name] for name in FINAL if name in imported.fields}
    if final.get("status") == "superseded" and not final.get("superseded_by_id"):
        final.pop("status")
    if final:
        update_record(conn, record.id, **final)
        for name, value in final.items():
            setattr(record, name, value)
