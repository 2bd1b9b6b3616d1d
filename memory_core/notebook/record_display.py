"""A record in a notebook: its envelope alone, or with its whole lineage (:class:`RecordView`).

A bare :class:`~memory_core.store.records.Record` does not know its store, so showing versions,
supersession, entity aliases, evidence turns and events needs the service::

    view = service.show_record("mem_…")   # or RecordView(service, "mem_…")
    view                                  # versions, links, evidence, events
    view.to_dataframe()                   # one row per version
"""

from __future__ import annotations

from typing import Any

from . import markup as m
from .safe import safe_html

VERSION_COLUMNS = (
    "version", "record_id", "status", "type", "scope", "source_kind", "created_at", "event_at", "content", "evidence",
    "supersedes_id", "superseded_by_id", "conflicts_with", "confidence", "observations", "review_flagged_at",
    "review_reason", "expires_at", "deleted_at",
)
ERASED = "(erased: the record was forgotten)"


def shown_content(record) -> str:
    """The record's text, or a note that it was erased."""
    return ERASED if record.status == "deleted" and not record.content else record.content


def version_row(record) -> dict[str, Any]:
    """A record as a flat row (``VERSION_COLUMNS``)."""
    return {
        "version": record.version, "record_id": record.id, "status": record.status, "type": record.type,
        "scope": record.scope, "source_kind": record.source_kind, "created_at": record.created_at,
        "event_at": record.event_at, "content": shown_content(record), "evidence": record.evidence,
        "supersedes_id": record.supersedes_id, "superseded_by_id": record.superseded_by_id,
        "conflicts_with": ", ".join(record.conflicts_with), "confidence": record.confidence,
        "observations": record.observations, "review_flagged_at": record.review_flagged_at,
        "review_reason": record.review_reason, "expires_at": record.expires_at, "deleted_at": record.deleted_at,
    }


def _envelope(record) -> list[tuple[str, Any]]:
    items = [
        ("content", shown_content(record)), ("attribute", record.attribute), ("subject", record.subject),
        ("scope", record.scope), ("source", f"{record.source_kind}" + (f" · {record.source_ref}" if record.source_ref else "")),
        ("created by agent", record.creator_agent_id), ("evidence", record.evidence),
        ("evidence from", f"session {record.evidence_session_id}, turn {record.evidence_turn}" if record.evidence_session_id else None),
        ("created", record.created_at), ("updated", record.updated_at), ("event time", record.event_at),
        ("valid from", record.valid_from), ("valid until", record.valid_until), ("expires", record.expires_at),
        ("review at", record.review_at), ("flagged for review", record.review_flagged_at), ("review reason", record.review_reason),
        ("confidence", record.confidence), ("observations", record.observations), ("supersedes", record.supersedes_id),
        ("superseded by", record.superseded_by_id), ("conflicts with", ", ".join(record.conflicts_with)),
        ("tags", ", ".join(record.tags)), ("deleted", record.deleted_at),
    ]
    return [(k, v) for k, v in items if v not in (None, "")]


def _links(record) -> list[dict[str, Any]]:
    return [{"name": l.get("name"), "kind": l.get("kind"), "role": l.get("role"), "entity": l.get("entity_id"),
             "scope": l.get("scope")} for l in record.entity_links]


@safe_html
def record_html(record) -> str:
    """One record's envelope (no lineage: use ``service.show_record`` for that)."""
    return m.page(m.heading(f"{record.id} · {record.type} v{record.version} · {record.status} · {record.scope}"),
                  m.pairs(_envelope(record), long=["content", "evidence"]),
                  m.details("entity links", m.table(_links(record), empty="No entity links.")))


def record_frame(record):
    import pandas as pd

    return pd.DataFrame([version_row(record)], columns=list(VERSION_COLUMNS))


class RecordView:
    """One record with its lineage, read from the service when created.

    Holds ``record``, ``versions`` (oldest first), ``related`` (records outside the lineage that a
    version supersedes, is superseded by or conflicts with), ``entities`` (with aliases),
    ``evidence_turns`` (the transcript around the evidence quote) and ``events`` (every event of
    every version). Raises ``NotFoundError`` at once for an unknown id.
    """

    def __init__(self, service, record_id: str, *, context_turns: int = 1) -> None:
        self.record = service.record(record_id)
        self.versions = service.lineage(record_id)
        in_lineage = {v.id for v in self.versions}
        wanted: list[str] = []
        for v in self.versions:
            for other in (v.supersedes_id, v.superseded_by_id, *v.conflicts_with):
                if other and other not in in_lineage and other not in wanted:
                    wanted.append(other)
        self.related: dict[str, Any] = {}
        for other in wanted:
            try:
                self.related[other] = service.record(other)
            except Exception:  # noqa: BLE001 - a link to a record that no longer exists is shown as such
                self.related[other] = None
        self.entities = []
        for link in self.record.entity_links:
            entity = service.entity(link["entity_id"]) or {}
            self.entities.append({**link, "aliases": entity.get("aliases", []), "status": entity.get("status")})
        self.evidence_turns = self._evidence(service, context_turns)
        events = [e for v in self.versions for e in service.events_for(v.id)]
        self.events = sorted({e["seq"]: e for e in events}.values(), key=lambda e: e["seq"])

    def _evidence(self, service, around: int) -> list[dict[str, Any]]:
        record = self.record
        if not record.evidence_session_id or record.evidence_turn is None:
            return []
        lo, hi = record.evidence_turn - around, record.evidence_turn + around
        return [{**t, "evidence": t["turn"] == record.evidence_turn}
                for t in service.transcript(record.evidence_session_id) if lo <= t["turn"] <= hi]

    def __repr__(self) -> str:
        return f"RecordView({self.record.id!r}, versions={[v.id for v in self.versions]})"

    def _repr_html_(self) -> str:
        return record_view_html(self)

    def to_dataframe(self):
        """One row per version of the lineage, oldest first (``VERSION_COLUMNS``)."""
        import pandas as pd

        return pd.DataFrame([version_row(v) for v in self.versions], columns=list(VERSION_COLUMNS))

    def events_dataframe(self):
        """Every event of every version, in order."""
        import pandas as pd

        return pd.DataFrame([{k: e.get(k) for k in ("seq", "at", "kind", "actor", "record_id", "reason", "payload")}
                             for e in self.events], columns=["seq", "at", "kind", "actor", "record_id", "reason", "payload"])


def _version_rows(view: RecordView) -> list[dict[str, Any]]:
    rows = []
    for v in view.versions:
        row = version_row(v)
        row["record_id"] = f"▶ {v.id}" if v.id == view.record.id else v.id
        rows.append(row)
    return rows


@safe_html
def record_view_html(view: RecordView) -> str:
    """The record, every version of its lineage, its links, evidence and events."""
    r = view.record
    live = [v for v in view.versions if v.status in ("provisional", "confirmed")]
    current = f"current version: {live[-1].id} (v{live[-1].version})" if live else "no live version in this lineage"
    parts = [m.heading(f"{r.id} · {r.type} v{r.version} of {len(view.versions)} · {r.status} · {r.scope}"),
             m.para(current, "ok" if live else "warn"),
             m.pairs(_envelope(r), long=["content", "evidence"]),
             m.heading("versions (oldest first; ▶ is this record)"),
             m.table(_version_rows(view), ["version", "record_id", "status", "source_kind", "created_at", "content",
                                           "supersedes_id", "superseded_by_id", "conflicts_with"], long=["content"])]
    if view.related:
        rows = [{"record_id": rid, "status": rec.status if rec else "missing", "scope": rec.scope if rec else None,
                 "content": shown_content(rec) if rec else None} for rid, rec in view.related.items()]
        parts += [m.heading("linked records outside this lineage (supersession, conflicts)"), m.table(rows, long=["content"])]
    ents = [{"name": e.get("name"), "kind": e.get("kind"), "role": e.get("role"), "aliases": ", ".join(e.get("aliases") or []),
             "scope": e.get("scope"), "entity": e.get("entity_id")} for e in view.entities]
    parts += [m.heading("entity links"), m.table(ents, empty="No entity links.")]
    turns = [{"turn": t["turn"], "role": t["role"], "at": t["at"], "evidence": "◀ quote" if t["evidence"] else "",
              "content": t["content"]} for t in view.evidence_turns]
    parts += [m.heading("evidence"), m.pairs([("quote", r.evidence or "(none)")], long=["quote"]),
              m.table(turns, long=["content"], empty="No transcript turn is linked to this record.")]
    events = [{"seq": e["seq"], "at": e["at"], "kind": e["kind"], "actor": e["actor"], "record": e["record_id"],
               "reason": e["reason"]} for e in view.events]
    parts.append(m.details(f"events ({len(events)})", m.table(events, long=["reason"], empty="No events.")))
    return m.page(*parts)
