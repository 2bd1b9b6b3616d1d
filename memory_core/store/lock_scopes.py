"""Which owner scopes a write touches, read before it locks them (``Store.run_locked``).

A record's and an entity's scope never change, so a scope read here outside the transaction is
still the row's scope when the transaction holds its lock.
"""

from __future__ import annotations

from collections.abc import Iterable

from .db import Store


def _marks(n: int) -> str:
    return ",".join("?" * n)


def record_scopes(conn, record_ids: Iterable[str]) -> set[str]:
    """The owner scopes of the given records (missing ids add nothing)."""
    ids = list(dict.fromkeys(record_ids))
    if not ids:
        return set()
    rows = conn.execute(f"SELECT DISTINCT scope_kind, scope_id FROM records WHERE id IN ({_marks(len(ids))})", ids)
    return {f"{r[0]}:{r[1]}" for r in rows}


def entity_scopes(conn, entity_ids: Iterable[str]) -> set[str]:
    """The owner scopes of the given entities."""
    ids = list(dict.fromkeys(entity_ids))
    if not ids:
        return set()
    rows = conn.execute(f"SELECT DISTINCT scope_kind, scope_id FROM entities WHERE id IN ({_marks(len(ids))})", ids)
    return {f"{r[0]}:{r[1]}" for r in rows}


def scope_of_record(store: Store, record_id: str) -> set[str]:
    """The scope of one record as a set (empty when there is no such record)."""
    with store.lock:
        return record_scopes(store.conn, [record_id])


def merge_scopes(conn, source_id: str, target_id: str) -> set[str]:
    """What a merge of ``source_id`` into ``target_id`` changes: the entities' scope and the scopes of
    the records linked to the source or holding either as their subject (a collision marks those)."""
    rows = conn.execute("SELECT r.scope_kind, r.scope_id FROM records r WHERE r.subject_entity_id IN (?, ?) OR r.id IN "
                        "(SELECT record_id FROM record_entities WHERE entity_id = ?)", (source_id, target_id, source_id))
    return entity_scopes(conn, [source_id, target_id]) | {f"{r[0]}:{r[1]}" for r in rows}
