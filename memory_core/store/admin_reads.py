"""What people browsing a store list and count: records, principals, scopes, entities, sessions.

Read-only and with no policy applied: the admin app (``admin_ui``) reaches these through the
service's admin methods (``service/admin_methods.py``) and restricts what a ``user``-role person
sees with ``owner_user_id``. Each filter is a small dataclass of values whose ``where()`` writes its
SQL here, next to the query that uses it; column names and table expressions are fixed in code and
only values travel as parameters. The logs, the search and session history and the overview's
series are in :mod:`memory_core.store.admin_logs`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from .db import Store, loads
from .paging import Where, count_rows, like_pattern, page_sql, select_page
from .records import SELECT_COLUMNS, Record, load_entity_links, record_from_row


@dataclass(frozen=True)
class RowsPage:
    """One page of ``rows`` out of ``total`` matching rows; ``page`` is clamped to the pages that exist."""

    rows: list[Any]
    total: int
    page: int
    page_size: int


def page_bounds(page: int, page_size: int, total: int) -> tuple[int, int]:
    """Clamp ``page`` (numbered from 1) to the pages that exist; returns (page, offset)."""
    pages = max(1, -(-total // page_size))
    page = min(max(1, int(page)), pages)
    return page, (page - 1) * page_size


def rows_page(store: Store, columns: str, source: str, where: Where, order_by: str, page: int, page_size: int,
              row: Callable[[Any], Any] = dict) -> RowsPage:
    """One page of a filtered list, with its total and clamped page number."""
    total = count_rows(store, source, where)
    page, offset = page_bounds(page, page_size, total)
    return RowsPage([row(r) for r in select_page(store, columns, source, where, order_by, page_size, offset)],
                    total, page, page_size)


# -- records --------------------------------------------------------------------------------------


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


# The orders a records list can be read in (a name, so no caller writes SQL).
RECORD_ORDERS = {"newest": "r.created_at DESC, r.seq DESC", "oldest": "r.created_at ASC, r.seq ASC"}


def browse_records(store: Store, flt: RecordFilter, page: int = 1, page_size: int = 50, order: str = "newest") -> RowsPage:
    """One page of records (with their entity links) matching ``flt``, in a named order of RECORD_ORDERS."""
    if order not in RECORD_ORDERS:
        raise ValueError(f"order must be one of {', '.join(RECORD_ORDERS)}")
    where = flt.where()
    total = count_rows(store, "records r", where)
    page, offset = page_bounds(page, page_size, total)
    with store.lock:
        rows = store.conn.execute(page_sql(SELECT_COLUMNS, "records r", where, RECORD_ORDERS[order]),
                                  [*where.params, page_size, offset]).fetchall()
        records = [record_from_row(row) for row in rows]
        load_entity_links(store.conn, records)
    return RowsPage(records, total, page, page_size)


FACET_COLUMNS = {"scope": "r.scope_kind || ':' || r.scope_id", "type": "r.type", "status": "r.status",
                 "source_kind": "r.source_kind"}


def record_facet(store: Store, flt: RecordFilter, facet: str) -> dict[str, int]:
    """Datasette-style facet: how many records each value of ``facet`` has under ``flt``, with
    ``flt``'s own condition on that facet left out (so the counts show what picking it would give)."""
    column = FACET_COLUMNS[facet]
    relaxed = {"scope": replace(flt, scope=None), "type": replace(flt, types=[]),
               "status": replace(flt, statuses=[], include_deleted=True), "source_kind": replace(flt, source_kinds=[])}[facet]
    where = relaxed.where()
    rows = store.query(f"SELECT {column} AS value, COUNT(*) AS n FROM records r WHERE {where.sql()} GROUP BY 1", where.params)
    return {r["value"]: r["n"] for r in rows}


# The columns a filter picker may list (anything else is refused: the names go into SQL).
PICKER_COLUMNS = frozenset({("records", "source_kind"), ("records", "type"), ("records", "status"), ("events", "kind"),
                            ("events", "actor"), ("write_log", "operation"), ("write_log", "outcome"),
                            ("extraction_runs", "status")})


def distinct_values(store: Store, table: str, column: str) -> list[str]:
    """Distinct non-null values of a known column (for filter pickers)."""
    if (table, column) not in PICKER_COLUMNS:
        raise ValueError(f"no picker for {table}.{column}")
    return [r[0] for r in store.query(f"SELECT DISTINCT {column} FROM {table} WHERE {column} IS NOT NULL ORDER BY 1")]


def known_scopes(store: Store, owner_user_id: str | None = None) -> list[str]:
    """Every scope that holds a record or a grant (only the scopes a user owns, for ``owner_user_id``)."""
    sql = ("SELECT DISTINCT scope_kind || ':' || scope_id FROM records r" +
           (f" WHERE {owner_predicate('r')}" if owner_user_id is not None else ""))
    params: list[Any] = [owner_user_id, owner_user_id] if owner_user_id is not None else []
    scopes = {row[0] for row in store.query(sql, params)}
    if owner_user_id is None:
        scopes |= {row[0] for row in store.query("SELECT DISTINCT scope_kind || ':' || scope_id FROM grants")}
    return sorted(scopes)


def known_agents(store: Store) -> list[str]:
    """Every agent id named by a grant, a session, a logged search or a record's creator."""
    rows = store.query(
        "SELECT agent_id FROM grants UNION SELECT agent_id FROM sessions UNION SELECT agent_id FROM search_log "
        "UNION SELECT creator_agent_id FROM records WHERE creator_agent_id IS NOT NULL ORDER BY 1"
    )
    return [r[0] for r in rows if r[0]]


def known_users(store: Store) -> list[str]:
    """Every user id named by a session, a logged search, a user scope's records or a user-scope grant."""
    rows = store.query(
        "SELECT user_id FROM sessions UNION SELECT user_id FROM search_log "
        "UNION SELECT scope_id FROM records WHERE scope_kind = 'user' UNION SELECT scope_id FROM grants WHERE scope_kind = 'user' ORDER BY 1"
    )
    return [r[0] for r in rows if r[0]]


def records_by_ids(store: Store, ids: list[str]) -> dict[str, Record]:
    """The records with these ids, whatever their status, with entity links (missing ids left out)."""
    if not ids:
        return {}
    with store.lock:
        rows = store.conn.execute(
            f"SELECT {SELECT_COLUMNS} FROM records r WHERE r.id IN ({','.join('?' * len(ids))})", ids
        ).fetchall()
        records = [record_from_row(row) for row in rows]
        load_entity_links(store.conn, records)
    return {r.id: r for r in records}


def session_row(store: Store, session_id: str) -> dict | None:
    """One session's row with its write targets decoded, or None."""
    row = store.query_one("SELECT * FROM sessions WHERE id = ?", (session_id,))
    return {**dict(row), "write_targets": loads(row["write_targets"], {})} if row else None


# -- entities -------------------------------------------------------------------------------------


@dataclass
class EntityFilter:
    """Filters of the entities list; empty values mean no filter."""

    scope: str | None = None
    kind: str | None = None
    text: str | None = None
    include_merged: bool = False

    def where(self) -> Where:
        """The filter as SQL conditions on ``entities e``."""
        where = Where()
        if self.scope:
            kind, _, ident = self.scope.partition(":")
            where.add("e.scope_kind = ? AND e.scope_id = ?", kind, ident)
        if self.kind:
            where.add("e.kind = ?", self.kind)
        if not self.include_merged:
            where.add("e.status != 'merged'")
        if self.text and self.text.strip():
            text = self.text.strip()
            where.add("(e.canonical_name LIKE ? ESCAPE '\\' OR e.id = ? OR e.id IN "
                      "(SELECT entity_id FROM entity_aliases WHERE alias LIKE ? ESCAPE '\\'))",
                      like_pattern(text), text, like_pattern(text))
        return where


def browse_entities(store: Store, flt: EntityFilter, page: int = 1, page_size: int = 50) -> RowsPage:
    """One page of entities with their aliases and how many records link to each."""
    columns = ("e.id, e.kind, e.canonical_name AS name, e.scope_kind || ':' || e.scope_id AS scope, e.status, "
               "e.merged_into, e.created_at, "
               "(SELECT group_concat(alias, ' | ') FROM entity_aliases a WHERE a.entity_id = e.id) AS aliases, "
               "(SELECT COUNT(*) FROM record_entities re WHERE re.entity_id = e.id) AS records")
    return rows_page(store, columns, "entities e", flt.where(), "e.canonical_name, e.id", page, page_size)


def entity_records(store: Store, entity_id: str, page: int = 1, page_size: int = 50) -> RowsPage:
    """Records linked to an entity, newest first, with the link's role."""
    columns = "r.id, re.role, r.type, r.status, r.content, r.scope_kind || ':' || r.scope_id AS scope, r.created_at"
    return rows_page(store, columns, "record_entities re JOIN records r ON r.id = re.record_id",
                     Where().add("re.entity_id = ?", entity_id), "r.created_at DESC, r.seq DESC", page, page_size)


def same_alias_elsewhere(store: Store, entity_id: str) -> list[dict]:
    """Live entities in *other* scopes sharing an alias with this one."""
    rows = store.query(
        "SELECT DISTINCT e.id, e.canonical_name AS name, e.kind, e.scope_kind || ':' || e.scope_id AS scope, a2.alias "
        "FROM entity_aliases a1 JOIN entity_aliases a2 ON a2.alias_norm = a1.alias_norm AND a2.entity_id != a1.entity_id "
        "JOIN entities e ON e.id = a2.entity_id JOIN entities me ON me.id = a1.entity_id "
        "WHERE a1.entity_id = ? AND e.status != 'merged' AND (e.scope_kind != me.scope_kind OR e.scope_id != me.scope_id)",
        (entity_id,),
    )
    return [dict(r) for r in rows]


def live_entities(store: Store, scope: str | None = None) -> list[dict[str, Any]]:
    """Every live entity (optionally of one scope): id, name, kind, scope, status, created_at, linked
    record count and its aliases (a list)."""
    params: list[Any] = []
    where = "e.status != 'merged'"
    if scope:
        kind, _, ident = scope.partition(":")
        where += " AND e.scope_kind = ? AND e.scope_id = ?"
        params += [kind, ident]
    rows = store.query(
        f"SELECT e.id, e.canonical_name AS name, e.kind, e.scope_kind || ':' || e.scope_id AS scope, e.status, e.created_at, "
        f"(SELECT COUNT(*) FROM record_entities re WHERE re.entity_id = e.id) AS records FROM entities e WHERE {where}",
        params,
    )
    aliases: dict[str, list[str]] = defaultdict(list)
    for row in store.query("SELECT a.entity_id, a.alias FROM entity_aliases a JOIN entities e ON e.id = a.entity_id "
                           f"WHERE {where}", params):
        aliases[row["entity_id"]].append(row["alias"])
    return [{**dict(r), "aliases": aliases.get(r["id"], [])} for r in rows]
