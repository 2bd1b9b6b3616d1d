"""Records for the app's lists and record view: filtered pages, facets, pickers, one record's story.

Pages build a :class:`RecordFilter`, call a function here and render the :class:`Page`. No policy
is applied: callers restrict what a ``user``-role identity sees with ``owner_user_id`` (lists) and
``Identity.owns_scope`` (one record's lineage and conflicts).
"""

from __future__ import annotations

from typing import Any

from memory_core.service.admin_methods import RECORD_STATUSES, RECORD_TYPES, Record, RecordFilter

from ..auth.accounts import Identity
from .pagination import Page

__all__ = ["RECORD_STATUSES", "RECORD_TYPES", "Record", "RecordFilter"]


def list_records(service, flt: RecordFilter, page: int = 1, page_size: int = 50, *, oldest_first: bool = False) -> Page:
    """One page of records (with entity links) matching ``flt``, newest first unless ``oldest_first``."""
    return Page.of(service.browse_records(flt, page=page, page_size=page_size, order="oldest" if oldest_first else "newest"))


def record_rows(records: list[Record]) -> list[dict[str, Any]]:
    """Table rows for a list of records (content shown as plain text by the dataframe)."""
    out = []
    for r in records:
        marker = "historical" if r.status in ("superseded", "expired") else ("forgotten" if r.status == "deleted" else "")
        out.append({
            "id": r.id, "type": r.type, "status": r.status, "marker": marker, "version": r.version,
            "content": r.content, "scope": r.scope, "source_kind": r.source_kind,
            "entities": ", ".join(link["name"] for link in r.entity_links),
            "review_due": bool(r.review_flagged_at), "created_at": r.created_at,
        })
    return out


def distinct_values(service, column: str, table: str = "records") -> list[str]:
    """Distinct non-null values of a known column (for filter pickers)."""
    return service.distinct_values(table, column)


def facet_counts(service, flt: RecordFilter, facet: str) -> dict[str, int]:
    """Datasette-style facet: how many records each value of ``facet`` has under ``flt``, with
    ``flt``'s own condition on that facet left out (so the counts show what picking it would give)."""
    return service.record_facet(flt, facet)


def known_scopes(service, owner_user_id: str | None = None) -> list[str]:
    """Every scope that holds a record or a grant (owned scopes only for a user)."""
    return service.known_scopes(owner_user_id)


def known_agents(service) -> list[str]:
    """Every agent the store mentions (grants, sessions, searches, record creators)."""
    return service.known_agents()


def known_users(service) -> list[str]:
    """Every user the store mentions (sessions, searches, user scopes, grants)."""
    return service.known_users()


def records_by_ids(service, ids: list[str]) -> dict[str, Record]:
    """The records with these ids, whatever their status."""
    return service.records_by_ids(ids) if ids else {}


def open_record(service, record_id: str) -> Record:
    """Any record by id, whatever its status (NotFoundError if there is none)."""
    return service.record(record_id)


def session_info(service, session_id: str) -> dict | None:
    """One session's row (agent, user, project, times), or None."""
    return service.session_info(session_id)


def transcript(service, session_id: str) -> list[dict]:
    """A session's turns in order."""
    return service.transcript(session_id)


def evidence_context(service, record: Record, around: int = 1) -> list[dict]:
    """The transcript turns around a record's evidence (the evidence turn itself marked)."""
    if not record.evidence_session_id:
        return []
    turns = service.transcript(record.evidence_session_id)
    if record.evidence_turn is None:
        return []
    lo, hi = record.evidence_turn - around, record.evidence_turn + around
    return [{**t, "evidence": t["turn"] == record.evidence_turn} for t in turns if lo <= t["turn"] <= hi]


def lineage_rows(service, identity: Identity, record: Record) -> list[dict]:
    """Every version of the record's lineage that ``identity`` may see, this one marked."""
    rows = []
    for version in service.lineage(record.id):
        if not identity.owns_scope(version.scope):
            continue
        rows.append({"id": version.id, "version": version.version, "status": version.status,
                     "this": "◀" if version.id == record.id else "", "content": version.content,
                     "source_kind": version.source_kind, "created_at": version.created_at,
                     "supersedes": version.supersedes_id, "superseded_by": version.superseded_by_id})
    return rows


def conflict_rows(service, identity: Identity, record: Record) -> list[dict]:
    """The records this one conflicts with, as far as ``identity`` may see them."""
    found = records_by_ids(service, list(record.conflicts_with))
    return [{"id": other.id, "status": other.status, "content": other.content, "source_kind": other.source_kind,
             "created_at": other.created_at} for other in found.values() if identity.owns_scope(other.scope)]


def entity_link_rows(record: Record) -> list[dict]:
    """The record's entity links as table rows."""
    return [{"entity_id": link["entity_id"], "name": link["name"], "kind": link["kind"], "role": link["role"],
             "entity scope": link["scope"]} for link in record.entity_links]


def event_rows(service, record_id: str) -> list[dict]:
    """The record's history in order: its own events and the entity merges that rewrote its links or
    subject (those are the entity's events; ``detail`` says which entity went into which)."""
    events = [{**e, "detail": ""} for e in service.events_for(record_id)]
    for merge in service.merges_for(record_id):
        payload = merge["payload"]
        events.append({**merge, "detail": f"entity {payload.get('source')} merged into {payload.get('target')}"})
    events.sort(key=lambda e: e["seq"])
    return [{"seq": e["seq"], "at": e["at"], "kind": e["kind"], "actor": e["actor"], "reason": e["reason"],
             "detail": e["detail"]} for e in events]
