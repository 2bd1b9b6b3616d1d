"""Named queries of the search pipeline over ``records``, ``entities`` and their links.

The retrieval stages call these and hold no SQL of their own, so a change of backend stays in
``store/``. Every query runs under ``store.lock`` on the store's connection (the PostgreSQL
backend translates the SQLite dialect, ``store/pg/translate.py``). A search's hard filter is a
value of the retrieval layer; :func:`filter_predicate` renders it as the WHERE clause every
generator's query carries, so no query can propose a record outside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from .as_of_queries import as_of_predicate
from .db import Store
from .batching import fetch_together
from .records import Record, fetch_records, record_statements, records_from, restrict_links

# The columns a candidate is made from (retrieve/generate/candidates.py).
CANDIDATE_COLUMNS = "r.seq, r.id, r.type, r.status, r.scope_kind, r.scope_id, r.created_at, r.event_at, r.expires_at"


class FilterTerms(Protocol):
    """What :func:`filter_predicate` reads of a hard filter (``retrieve.filters.HardFilter``)."""

    scopes: tuple[str, ...]
    statuses: tuple[str, ...]
    types: tuple[str, ...] | None
    event_from: str | None
    event_to: str | None
    now: str
    include_lapsed: bool
    # (an as-of search also has ``as_of`` and ``as_of_mode``, read with getattr: see store/as_of_queries.py)


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def filter_predicate(flt: FilterTerms, alias: str = "r") -> tuple[str, list[Any]]:
    """The hard filter as a WHERE fragment over ``records AS alias``, and its parameters."""
    if not flt.scopes or not flt.statuses:
        return "1 = 0", []
    pairs = [scope.split(":", 1) for scope in flt.scopes]
    clauses = [f"({alias}.scope_kind, {alias}.scope_id) IN (VALUES {', '.join('(?, ?)' for _ in pairs)})"]
    params: list[Any] = [part for pair in pairs for part in pair]
    clauses.append(f"{alias}.status IN ({', '.join('?' * len(flt.statuses))})")
    params.extend(flt.statuses)
    if flt.types:
        clauses.append(f"{alias}.type IN ({', '.join('?' * len(flt.types))})")
        params.extend(flt.types)
    if flt.event_from is not None:
        clauses.append(f"{alias}.event_at >= ?")
        params.append(flt.event_from)
    if flt.event_to is not None:
        clauses.append(f"{alias}.event_at <= ?")
        params.append(flt.event_to)
    if not flt.include_lapsed:
        clauses.append(f"NOT ({alias}.status = 'provisional' AND {alias}.expires_at IS NOT NULL AND {alias}.expires_at <= ?)")
        params.append(flt.now)
    as_of = getattr(flt, "as_of", None)
    if as_of:
        sql, more = as_of_predicate(alias, as_of, flt.as_of_mode)
        clauses.append(sql)
        params.extend(more)
    return " AND ".join(clauses), params


def lapsed_provisional_seqs(store: Store, now: str) -> list[int]:
    """Provisional records whose expiry has passed (the partial expiry index makes this cheap)."""
    with store.lock:
        rows = store.conn.execute(
            "SELECT seq FROM records WHERE status = 'provisional' AND expires_at IS NOT NULL AND expires_at <= ?", (now,)
        ).fetchall()
    return [row[0] for row in rows]


def candidate_rows(store: Store, seqs: Sequence[int]) -> dict[int, Any]:
    """The :data:`CANDIDATE_COLUMNS` of the listed records, by seq (a missing record is absent)."""
    if not seqs:
        return {}
    with store.lock:
        rows = store.conn.execute(f"SELECT {CANDIDATE_COLUMNS} FROM records r WHERE r.seq IN ({_marks(seqs)})", list(seqs)).fetchall()
    return {row["seq"]: row for row in rows}


def entities_named(store: Store, scopes: Sequence[str], keys: Sequence[str], entity_ids: Sequence[str]) -> list[dict[str, str]]:
    """Live (unmerged) entities in ``scopes`` whose normalised alias is one of ``keys`` or whose id
    is one of ``entity_ids``: ``{id, name, kind, matched}`` each, the alias (or id) that matched."""
    if not scopes or not (keys or entity_ids):
        return []
    pairs = [scope.split(":", 1) for scope in scopes]
    scope_sql = f"(e.scope_kind, e.scope_id) IN (VALUES {', '.join('(?, ?)' for _ in pairs)})"
    scope_params = [part for pair in pairs for part in pair]
    found: dict[str, dict[str, str]] = {}
    with store.lock:
        if keys:
            rows = store.conn.execute(
                "SELECT a.alias_norm, e.id, e.canonical_name, e.kind FROM entity_aliases a JOIN entities e ON e.id = a.entity_id "
                f"WHERE a.alias_norm IN ({_marks(keys)}) AND e.status != 'merged' AND {scope_sql} "
                "ORDER BY e.canonical_name, e.created_at, e.id",
                [*keys, *scope_params],
            ).fetchall()
            for row in rows:
                found.setdefault(row["id"], {"id": row["id"], "name": row["canonical_name"], "kind": row["kind"], "matched": row["alias_norm"]})
        if entity_ids:
            rows = store.conn.execute(
                f"SELECT e.id, e.canonical_name, e.kind FROM entities e WHERE e.id IN ({_marks(entity_ids)}) "
                f"AND e.status != 'merged' AND {scope_sql}",
                [*entity_ids, *scope_params],
            ).fetchall()
            for row in rows:
                found.setdefault(row["id"], {"id": row["id"], "name": row["canonical_name"], "kind": row["kind"], "matched": row["id"]})
    return list(found.values())


def records_linked_to(store: Store, flt: FilterTerms, entity_ids: Sequence[str], links_per_entity: int, k: int) -> list[Any]:
    """Records linked to the entities and passing the filter, at most ``k``: those linked to more of
    them first, then the most recent. Only each entity's ``links_per_entity`` newest links are
    examined, so an entity linked to thousands of records costs no more than a small one. Each
    row has the candidate columns and ``entity_ids`` (comma-separated)."""
    if not entity_ids:
        return []
    where, params = filter_predicate(flt, "r")
    recent = " UNION ALL ".join(
        "SELECT * FROM (SELECT record_id, entity_id FROM record_entities WHERE entity_id = ? ORDER BY rowid DESC LIMIT ?)"
        for _ in entity_ids
    )
    sql = (
        f"SELECT {CANDIDATE_COLUMNS}, group_concat(x.entity_id) AS entity_ids FROM ({recent}) x "
        f"JOIN records r ON r.id = x.record_id WHERE {where} "
        f"GROUP BY r.seq ORDER BY count(DISTINCT x.entity_id) DESC, COALESCE(r.event_at, r.created_at) DESC, r.seq DESC LIMIT ?"
    )
    with store.lock:
        return store.conn.execute(sql, [*(v for eid in entity_ids for v in (eid, links_per_entity)), *params, k]).fetchall()


def entity_links_among(store: Store, entity_ids: Sequence[str], record_ids: Sequence[str]) -> list[tuple[str, str]]:
    """``(record_id, entity_id)`` for every link between the listed records and entities."""
    if not entity_ids or not record_ids:
        return []
    with store.lock:
        rows = store.conn.execute(
            f"SELECT record_id, entity_id FROM record_entities WHERE entity_id IN ({_marks(entity_ids)}) "
            f"AND record_id IN ({_marks(record_ids)})", [*entity_ids, *record_ids]).fetchall()
    return [(row[0], row[1]) for row in rows]


def record_contents(store: Store, seqs: Sequence[int]) -> dict[int, str]:
    """The content of each listed record, by seq."""
    if not seqs:
        return {}
    with store.lock:
        return dict(store.conn.execute(f"SELECT seq, content FROM records WHERE seq IN ({_marks(seqs)})", list(seqs)).fetchall())


def surviving_rows(store: Store, seqs: Sequence[int], with_vectors: bool) -> dict[int, Any]:
    """``seq``, ``status`` and ``content`` (and the ``embedding`` blob with ``with_vectors``) of the
    listed records, by seq: what near-duplicate collapse reads of the gate's survivors."""
    if not seqs:
        return {}
    with store.lock:
        rows = store.conn.execute(f"SELECT seq, status, content{', embedding' if with_vectors else ''} FROM records "
                                  f"WHERE seq IN ({_marks(seqs)})", list(seqs))
        return {row[0]: row for row in rows}


def surviving_rows_with_records(store: Store, seqs: Sequence[int]) -> tuple[dict[int, Any], dict[int, Record]]:
    """PostgreSQL: :func:`surviving_rows` (with the embedding blobs) and the full records with their
    entity links of the same seqs, in one round trip (the budget stage then picks its results from
    them instead of reading them again)."""
    if not seqs:
        return {}, {}
    where, params = f"r.seq IN ({_marks(seqs)})", list(seqs)
    with store.lock:
        rows, record_rows, link_rows = fetch_together(store.conn, [
            (f"SELECT seq, status, content, embedding FROM records WHERE seq IN ({_marks(seqs)})", list(seqs)),
            *record_statements(where, params)])
    return {row[0]: row for row in rows}, {r.seq: r for r in records_from(record_rows, link_rows)}


def result_records(store: Store, seqs: Sequence[int], readable_keys: Iterable[str] | None) -> dict[int, Record]:
    """The full records (with entity links) of the listed seqs, by seq; with ``readable_keys``
    only links to entities in those scopes are kept (never name an entity the reader cannot read)."""
    if not seqs:
        return {}
    with store.lock:
        records = {r.seq: r for r in fetch_records(store.conn, f"r.seq IN ({_marks(seqs)})", list(seqs))}
    return results_from(records, seqs, readable_keys)


def results_from(records: dict[int, Record], seqs: Sequence[int], readable_keys: Iterable[str] | None) -> dict[int, Record]:
    """The listed seqs' records out of ``records``, links restricted as :func:`result_records` does."""
    picked = {seq: records[seq] for seq in seqs if seq in records}
    if readable_keys is not None:
        restrict_links(picked.values(), readable_keys)
    return picked


def records_by_id(store: Store, ids: Sequence[str]) -> dict[str, Record]:
    """The full records of the listed ids, by id (any status)."""
    if not ids:
        return {}
    with store.lock:
        return {r.id: r for r in fetch_records(store.conn, f"r.id IN ({_marks(ids)})", list(ids))}
