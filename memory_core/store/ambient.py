"""The SQL of the ambient profile: decisions per record lineage and each session's recorded prefix.

Rules live in ``policy.ambient``, assembly in ``retrieve.ambient``; this module only reads and
writes the ``ambient_decisions`` and ``session_context`` tables (migrations 91 and 92).
"""

from __future__ import annotations

from typing import Any

from ..inputs import loggable
from .db import Store, dumps, loads
from .records import Record, fetch_records

CONTEXT_JSON_COLUMNS = {"profile_items": [], "profile_excluded": [], "profile_limits": {}, "memory_tools": [],
                        "offered_tools": None}


def add_decision(store: Store, *, lineage_id: str, record_id: str, version: int, decision: str, actor: str, at: str,
                 reason: str | None) -> int:
    """Append a decision and its audit event (``ambient.<decision>``) in one transaction; returns its seq."""
    with store.transaction() as conn:
        cur = conn.execute(
            "INSERT INTO ambient_decisions (lineage_id, record_id, version, decision, actor, at, reason) VALUES (?,?,?,?,?,?,?)",
            (lineage_id, record_id, version, decision, actor, at, reason),
        )
        store.append_event(conn, at=at, kind=f"ambient.{decision}", actor=actor, record_id=record_id, reason=reason,
                           payload={"lineage_id": lineage_id, "version": version})
        return int(cur.lastrowid)


def attribute_records(store: Store, attributes: tuple[str, ...], statuses: tuple[str, ...], scopes: list[str] | None,
                      now: str | None) -> list[Record]:
    """Semantic records in ``statuses`` whose attribute is one of ``attributes`` (no entity links), in
    ``scopes`` (``None``: every scope; an empty list: none); with ``now``, a provisional record past
    its expiry is left out even before maintenance marks it. What ambient assembly classifies."""
    if scopes is not None and not scopes:
        return []
    where = ["r.type = 'semantic'", f"r.status IN ({','.join('?' * len(statuses))})",
             f"r.attribute IN ({','.join('?' * len(attributes))})"]
    params: list[Any] = [*statuses, *attributes]
    if scopes is not None:
        where.append(f"(r.scope_kind || ':' || r.scope_id) IN ({','.join('?' * len(scopes))})")
        params.extend(scopes)
    if now is not None:
        where.append("NOT (r.status = 'provisional' AND r.expires_at IS NOT NULL AND r.expires_at <= ?)")
        params.append(now)
    with store.lock:
        return fetch_records(store.conn, " AND ".join(where), params, links=False)


def latest_decisions(store: Store, lineage_ids: list[str]) -> dict[str, dict[str, Any]]:
    """The standing (latest) decision of each lineage that has one."""
    out: dict[str, dict[str, Any]] = {}
    ids = list(dict.fromkeys(lineage_ids))
    for start in range(0, len(ids), 500):  # stay under SQLite's bound-parameter limit
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        rows = store.query(
            f"SELECT d.* FROM ambient_decisions d JOIN (SELECT lineage_id, MAX(seq) AS seq FROM ambient_decisions "
            f"WHERE lineage_id IN ({marks}) GROUP BY lineage_id) m ON m.seq = d.seq", chunk)
        out.update({row["lineage_id"]: dict(row) for row in rows})
    return out


def owner_person_entities(store: Store, entity_ids: list[str]) -> dict[str, str]:
    """Of ``entity_ids``, the principal person entities (a user's own, created by the write path in
    ``user:<id>`` with the user id as name): entity id -> that user id."""
    out: dict[str, str] = {}
    ids = list(dict.fromkeys(entity_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        rows = store.query(
            f"SELECT id, canonical_name, scope_id FROM entities WHERE id IN ({','.join('?' * len(chunk))}) "
            "AND kind = 'person' AND scope_kind = 'user'", chunk)
        out.update({row["id"]: row["scope_id"] for row in rows if row["canonical_name"].casefold() == row["scope_id"].casefold()})
    return out


def decision_history(store: Store, lineage_id: str) -> list[dict[str, Any]]:
    """Every decision about one lineage, oldest first."""
    return [dict(r) for r in store.query("SELECT * FROM ambient_decisions WHERE lineage_id = ? ORDER BY seq", (lineage_id,))]


def insert_context(store: Store, row: dict[str, Any]) -> bool:
    """Record a session's prefix unless one is already recorded (the first opener wins, so two
    processes resuming one session agree); True when this call wrote it."""
    row = loggable(row)  # the host's policy and texts are outside text: a lone surrogate is stored escaped
    values = {k: dumps(v) if k in CONTEXT_JSON_COLUMNS and v is not None else v for k, v in row.items()}
    columns = ", ".join(values)
    with store.transaction() as conn:
        cur = conn.execute(f"INSERT OR IGNORE INTO session_context ({columns}) VALUES ({','.join('?' * len(values))})",
                           list(values.values()))
        return cur.rowcount == 1


def record_model_view(store: Store, session_id: str, *, system_text: str, offered_tools: list[dict[str, Any]], at: str) -> bool:
    """Fill in the system text and tools of the session's first model call (once); True when written.
    Both come from the host framework: stored in their ``loggable`` form, so recording never fails."""
    system_text, offered_tools = loggable([system_text, offered_tools])
    with store.transaction() as conn:
        cur = conn.execute(
            "UPDATE session_context SET system_text = ?, offered_tools = ?, model_view_at = ? "
            "WHERE session_id = ? AND model_view_at IS NULL", (system_text, dumps(offered_tools), at, session_id))
        return cur.rowcount == 1


def session_context(store: Store, session_id: str) -> dict[str, Any] | None:
    """A session's recorded prefix with its JSON columns decoded, or None."""
    row = store.query_one("SELECT * FROM session_context WHERE session_id = ?", (session_id,))
    if row is None:
        return None
    out = dict(row)
    for column, default in CONTEXT_JSON_COLUMNS.items():
        out[column] = loads(out.get(column), default)
    out["ambient_enabled"] = bool(out["ambient_enabled"])
    return out


def private_agent_scopes(store: Store, user_id: str) -> list[str]:
    """The scope keys of records in a private agent scope of ``user_id`` (``agent:<agent>/<user>``)."""
    rows = store.query("SELECT DISTINCT scope_id FROM records WHERE scope_kind = 'agent' AND scope_id LIKE ?", (f"%/{user_id}",))
    return [f"agent:{row['scope_id']}" for row in rows if row["scope_id"].endswith(f"/{user_id}")]
