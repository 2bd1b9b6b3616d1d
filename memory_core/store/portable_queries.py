"""The named queries behind export and import (``memory_core.portable``): no SQL outside ``store/``."""

from __future__ import annotations

from typing import Any

from .db import loads
from .records import Record, fetch_records


def exportable_records(store, scope_keys: list[str]) -> list[Record]:
    """Every record not forgotten in ``scope_keys``, oldest first (with entity links)."""
    if not scope_keys:
        return []
    marks = ",".join("?" * len(scope_keys))
    with store.lock:
        return fetch_records(store.conn, f"(r.scope_kind || ':' || r.scope_id) IN ({marks}) AND r.status != 'deleted' "
                             "ORDER BY r.created_at, r.version, r.seq", list(scope_keys))


def scopes_with_records(store) -> list[str]:
    """Every scope that holds a record not forgotten."""
    rows = store.query("SELECT DISTINCT scope_kind || ':' || scope_id AS scope FROM records WHERE status != 'deleted' ORDER BY 1")
    return [row["scope"] for row in rows]


def entities_by_id(store, entity_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Entities with their aliases (sorted), keyed by id."""
    if not entity_ids:
        return {}
    marks = ",".join("?" * len(entity_ids))
    with store.lock:
        rows = store.conn.execute(f"SELECT id, kind, canonical_name, scope_kind, scope_id, status, created_at FROM entities "
                                  f"WHERE id IN ({marks})", list(entity_ids)).fetchall()
        aliases = store.conn.execute(f"SELECT entity_id, alias FROM entity_aliases WHERE entity_id IN ({marks}) "
                                     "ORDER BY entity_id, alias", list(entity_ids)).fetchall()
    out = {row["id"]: {"id": row["id"], "kind": row["kind"], "name": row["canonical_name"],
                       "scope": f"{row['scope_kind']}:{row['scope_id']}", "status": row["status"],
                       "created_at": row["created_at"], "aliases": []} for row in rows}
    for row in aliases:
        out[row["entity_id"]]["aliases"].append(row["alias"])
    return out


def procedures_of(store, record_ids: list[str]) -> dict[str, dict[str, Any]]:
    """The procedure rows of procedural records, keyed by record id."""
    if not record_ids:
        return {}
    marks = ",".join("?" * len(record_ids))
    rows = store.query(f"SELECT record_id, name, trigger, steps, pitfalls FROM procedures WHERE record_id IN ({marks})", list(record_ids))
    return {row["record_id"]: {"name": row["name"], "trigger": row["trigger"], "steps": loads(row["steps"], []),
                               "pitfalls": loads(row["pitfalls"], [])} for row in rows}


def sessions_with_turns(store, session_ids: list[str]) -> list[dict[str, Any]]:
    """Sessions (oldest first), each with its turns in order."""
    if not session_ids:
        return []
    marks = ",".join("?" * len(session_ids))
    rows = store.query(f"SELECT id, agent_id, user_id, project_id, write_targets, started_at, ended_at, framework, trigger_mode "
                       f"FROM sessions WHERE id IN ({marks}) ORDER BY started_at, id", list(session_ids))
    turns = store.query(f"SELECT session_id, turn, role, content, at FROM turns WHERE session_id IN ({marks}) "
                        "ORDER BY session_id, turn", list(session_ids))
    out = {row["id"]: {**dict(row), "write_targets": loads(row["write_targets"], {}), "turns": []} for row in rows}
    for row in turns:
        out[row["session_id"]]["turns"].append({"turn": row["turn"], "role": row["role"], "content": row["content"], "at": row["at"]})
    return list(out.values())


def existing_ids(conn, table: str, ids: list[str]) -> set[str]:
    """Which of ``ids`` are already rows of ``table`` (records, entities or sessions)."""
    assert table in ("records", "entities", "sessions")
    if not ids:
        return set()
    marks = ",".join("?" * len(ids))
    return {row[0] for row in conn.execute(f"SELECT id FROM {table} WHERE id IN ({marks})", list(ids)).fetchall()}


def insert_entity_as_is(conn, entity: dict[str, Any], scope_kind: str, scope_id: str, actor: str) -> None:
    """An entity from an import file, under its own id (the caller checked the id is free)."""
    conn.execute("INSERT INTO entities (id, kind, canonical_name, scope_kind, scope_id, status, created_at, created_by) "
                 "VALUES (?,?,?,?,?,?,?,?)", (entity["id"], entity["kind"], entity["name"], scope_kind, scope_id,
                                             entity["status"] if entity["status"] != "merged" else "provisional",
                                             entity["created_at"], actor))


def insert_session_as_is(conn, session: dict[str, Any], dumps) -> None:
    """A session and its turns from an import file (the caller checked the id is free)."""
    conn.execute("INSERT INTO sessions (id, agent_id, user_id, project_id, write_targets, started_at, ended_at, framework, trigger_mode) "
                 "VALUES (?,?,?,?,?,?,?,?,?)", (session["id"], session["agent_id"], session["user_id"], session.get("project_id"),
                                               dumps(session.get("write_targets") or {}), session["started_at"],
                                               session.get("ended_at"), session.get("framework"), session.get("trigger_mode")))
    for turn in session.get("turns", []):
        conn.execute("INSERT INTO turns (session_id, turn, role, content, at) VALUES (?,?,?,?,?)",
                     (session["id"], turn["turn"], turn["role"], turn["content"], turn["at"]))
