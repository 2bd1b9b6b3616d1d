"""Read-only queries behind the app's lists: filtered, paginated, no policy applied.

Pages never hold SQL; they build a filter, call a function here and render the :class:`Page`.
Callers restrict what a ``user``-role identity sees with ``owner_user_id``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory_core.extract.runs import count_waiting_after_failure
from memory_core.store import overview
from memory_core.store.db import loads
from memory_core.store.paging import Where, count_rows, like_pattern, page_sql
from memory_core.store.records import SELECT_COLUMNS, Record, load_entity_links, record_from_row

from .pagination import Page, page_bounds


def owner_predicate(alias: str = "r") -> str:
    """SQL true for scopes a user owns: user:<id> and agent:<any>/<id> (one ``?`` for the id, twice)."""
    return (
        f"(({alias}.scope_kind = 'user' AND {alias}.scope_id = ?) OR "
        f"({alias}.scope_kind = 'agent' AND instr({alias}.scope_id, '/') > 0 "
        f"AND substr({alias}.scope_id, instr({alias}.scope_id, '/') + 1) = ?))"
    )


@dataclass
class RecordFilter:
    """Filters of the records list; empty values mean no filter."""

    scope: str | None = None
    scope_kind: str | None = None
    types: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    source_kinds: list[str] = field(default_factory=list)
    entity_id: str | None = None
    text: str | None = None
    review_due: bool = False
    owner_user_id: str | None = None
    include_deleted: bool = False

    def where(self) -> Where:
        """The filter as SQL conditions on ``records r``."""
        where = Where()
        if self.scope:
            kind, _, ident = self.scope.partition(":")
            where.add("r.scope_kind = ? AND r.scope_id = ?", kind, ident)
        if self.scope_kind:
            where.add("r.scope_kind = ?", self.scope_kind)
        for column, values in (("type", self.types), ("status", self.statuses), ("source_kind", self.source_kinds)):
            if values:
                where.add(f"r.{column} IN ({','.join('?' * len(values))})", *values)
        if not self.include_deleted and "deleted" not in self.statuses:
            where.add("r.status != 'deleted'")
        if self.entity_id:
            where.add("r.id IN (SELECT record_id FROM record_entities WHERE entity_id = ?)", self.entity_id)
        if self.text and self.text.strip():
            text = self.text.strip()
            where.add("(r.content LIKE ? ESCAPE '\\' OR r.id = ? OR r.attribute LIKE ? ESCAPE '\\')",
                      like_pattern(text), text, like_pattern(text))
        if self.review_due:
            where.add("r.review_flagged_at IS NOT NULL")
        if self.owner_user_id is not None:
            where.add(owner_predicate("r"), self.owner_user_id, self.owner_user_id)
        return where


def list_records(service, flt: RecordFilter, page: int = 1, page_size: int = 50,
                 order: str = "r.created_at DESC, r.seq DESC") -> Page:
    """One page of records (with entity links) matching ``flt``."""
    where = flt.where()
    total = count_rows(service.store, "records r", where)
    page, offset = page_bounds(page, page_size, total)
    with service.store.lock:
        rows = service.store.conn.execute(
            page_sql(SELECT_COLUMNS, "records r", where, order), [*where.params, page_size, offset],
        ).fetchall()
        records = [record_from_row(row) for row in rows]
        load_entity_links(service.store.conn, records)
    return Page(records, total, page, page_size)


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
    allowed = {("records", "source_kind"), ("records", "type"), ("records", "status"), ("events", "kind"),
               ("events", "actor"), ("write_log", "operation"), ("write_log", "outcome"), ("extraction_runs", "status")}
    if (table, column) not in allowed:
        raise ValueError(f"no picker for {table}.{column}")
    return [r[0] for r in service.store.query(f"SELECT DISTINCT {column} FROM {table} WHERE {column} IS NOT NULL ORDER BY 1")]


FACET_COLUMNS = {"scope": "r.scope_kind || ':' || r.scope_id", "type": "r.type", "status": "r.status",
                 "source_kind": "r.source_kind"}


def facet_counts(service, flt: RecordFilter, facet: str) -> dict[str, int]:
    """Datasette-style facet: how many records each value of ``facet`` has under ``flt``, with
    ``flt``'s own condition on that facet left out (so the counts show what picking it would give)."""
    column = FACET_COLUMNS[facet]
    relaxed = RecordFilter(**{**vars(flt)})
    if facet == "scope":
        relaxed.scope = None
    elif facet == "type":
        relaxed.types = []
    elif facet == "status":
        relaxed.statuses = []
        relaxed.include_deleted = True
    elif facet == "source_kind":
        relaxed.source_kinds = []
    where = relaxed.where()
    rows = service.store.query(f"SELECT {column} AS value, COUNT(*) AS n FROM records r WHERE {where.sql()} GROUP BY 1",
                               where.params)
    return {r["value"]: r["n"] for r in rows}


def known_scopes(service, owner_user_id: str | None = None) -> list[str]:
    """Every scope that holds a record or a grant (owned scopes only for a user)."""
    sql = ("SELECT DISTINCT scope_kind || ':' || scope_id FROM records r" +
           (f" WHERE {owner_predicate('r')}" if owner_user_id is not None else ""))
    params: list[Any] = [owner_user_id, owner_user_id] if owner_user_id is not None else []
    scopes = {row[0] for row in service.store.query(sql, params)}
    if owner_user_id is None:
        scopes |= {row[0] for row in service.store.query("SELECT DISTINCT scope_kind || ':' || scope_id FROM grants")}
    return sorted(scopes)


def known_agents(service) -> list[str]:
    rows = service.store.query(
        "SELECT agent_id FROM grants UNION SELECT agent_id FROM sessions UNION SELECT agent_id FROM search_log "
        "UNION SELECT creator_agent_id FROM records WHERE creator_agent_id IS NOT NULL ORDER BY 1"
    )
    return [r[0] for r in rows if r[0]]


def known_users(service) -> list[str]:
    rows = service.store.query(
        "SELECT user_id FROM sessions UNION SELECT user_id FROM search_log "
        "UNION SELECT scope_id FROM records WHERE scope_kind = 'user' UNION SELECT scope_id FROM grants WHERE scope_kind = 'user' ORDER BY 1"
    )
    return [r[0] for r in rows if r[0]]


def records_by_ids(service, ids: list[str]) -> dict[str, Record]:
    if not ids:
        return {}
    with service.store.lock:
        rows = service.store.conn.execute(
            f"SELECT {SELECT_COLUMNS} FROM records r WHERE r.id IN ({','.join('?' * len(ids))})", ids
        ).fetchall()
        records = [record_from_row(row) for row in rows]
        load_entity_links(service.store.conn, records)
    return {r.id: r for r in records}


def evidence_context(service, record: Record, around: int = 1) -> list[dict]:
    """The transcript turns around a record's evidence (the evidence turn itself marked)."""
    if not record.evidence_session_id:
        return []
    turns = service.transcript(record.evidence_session_id)
    if record.evidence_turn is None:
        return []
    lo, hi = record.evidence_turn - around, record.evidence_turn + around
    return [{**t, "evidence": t["turn"] == record.evidence_turn} for t in turns if lo <= t["turn"] <= hi]


def session_info(service, session_id: str) -> dict | None:
    row = service.store.query_one("SELECT * FROM sessions WHERE id = ?", (session_id,))
    return {**dict(row), "write_targets": loads(row["write_targets"], {})} if row else None


# -- overview ----------------------------------------------------------------------------------


def records_over_time(service) -> list[dict]:
    """Records created per day and type."""
    return overview.records_over_time(service.store)


def counts_by_scope(service, limit: int = 20) -> list[dict]:
    return overview.counts_by_scope(service.store, limit)


def review_queue_sizes(service) -> dict[str, int]:
    """The overview's counts, with the queued runs that wait after a failed attempt."""
    return {**overview.review_queue_sizes(service.store), "retrying_extractions": count_waiting_after_failure(service.store)}


def extraction_trouble(sizes: dict[str, int]) -> str:
    """The overview's sentence about extraction runs that need a person (failed, or waiting after a failure)."""
    parts = []
    if sizes.get("failed_extractions"):
        parts.append(f"{sizes['failed_extractions']} extraction run(s) failed")
    if sizes.get("retrying_extractions"):
        parts.append(f"{sizes['retrying_extractions']} wait for another attempt after a failed one")
    return "; ".join(parts) + ". The Extraction page (Status filter) shows why, and an operator can retry them."


def search_latencies(service, limit: int = 5000) -> list[float]:
    return overview.search_latencies(service.store, limit)


def recent_events(service, limit: int = 15) -> list[dict]:
    return overview.recent_events(service.store, limit)
