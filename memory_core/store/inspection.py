"""Admin reads of one record or entity, whatever its status (no policy applied)."""

from __future__ import annotations

from .db import Store, loads
from .records import Record, fetch_records


def lineage(store: Store, lineage_id: str) -> list[Record]:
    """Every version of a lineage, oldest first."""
    with store.lock:
        return fetch_records(store.conn, "r.lineage_id = ? ORDER BY r.version, r.seq", (lineage_id,))


def record_events(store: Store, record_id: str) -> list[dict]:
    """The events of one record, in order, payloads decoded."""
    rows = store.query("SELECT * FROM events WHERE record_id = ? ORDER BY seq", (record_id,))
    return [{**dict(r), "payload": loads(r["payload"], {})} for r in rows]


def entity(store: Store, entity_id: str) -> dict | None:
    """An entity with its scope key and aliases, or None."""
    row = store.query_one("SELECT * FROM entities WHERE id = ?", (entity_id,))
    if row is None:
        return None
    aliases = [r["alias"] for r in store.query("SELECT alias FROM entity_aliases WHERE entity_id = ? ORDER BY alias", (entity_id,))]
    return {**dict(row), "scope": f"{row['scope_kind']}:{row['scope_id']}", "aliases": aliases}
