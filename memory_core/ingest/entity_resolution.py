"""Entity resolution by exact alias within readable scopes, and entity creation and merging.

There is no fuzzy matching and nothing merges automatically: an unknown name becomes a new
provisional entity in the writer's scope, and merges are an explicit, audited operation. The
write path resolves names only among entities of the record's own scope (see docs/store.md,
"Entities and scopes"), so a shared record never links a private entity.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from ..ids import new_id
from ..text import normalise_alias
from ..policy.scopes import Scope
from ..store import write_queries as queries

ENTITY_KINDS = ("person", "project", "org", "repo", "product", "other")


@dataclass
class EntityMatch:
    entity_id: str
    created: bool
    candidates: list[str] = field(default_factory=list)
    reason: str = ""


def find_by_alias(conn: sqlite3.Connection, alias: str, scope_keys: list[str]) -> list[sqlite3.Row]:
    """Live entities with this exact alias in any of ``scope_keys`` (oldest first)."""
    return queries.entities_by_alias(conn, normalise_alias(alias), scope_keys)


def create_entity(
    conn: sqlite3.Connection, *, name: str, kind: str, scope: Scope, now: str, actor: str,
    status: str = "provisional", aliases: list[str] | None = None,
) -> str:
    entity_id = new_id("ent")
    queries.insert_entity(conn, entity_id=entity_id, kind=kind, name=name, scope_kind=scope.kind, scope_id=scope.id,
                          status=status, now=now, actor=actor)
    for alias in [name, *(aliases or [])]:
        add_alias(conn, entity_id, alias)
    return entity_id


def add_alias(conn: sqlite3.Connection, entity_id: str, alias: str) -> None:
    norm = normalise_alias(alias)
    if norm:
        queries.insert_alias(conn, entity_id, alias.strip(), norm)


def resolve_entity(
    conn: sqlite3.Connection, *, name: str, kind: str, readable: list[str], writer_scope: Scope, now: str, actor: str,
) -> EntityMatch:
    """Exact alias match within ``readable`` scopes, preferring the writer's scope; else create."""
    found = find_by_alias(conn, name, readable)
    if found:
        in_writer = [row for row in found if f"{row['scope_kind']}:{row['scope_id']}" == writer_scope.key]
        chosen = (in_writer or found)[0]
        others = [row["id"] for row in found if row["id"] != chosen["id"]]
        reason = f"exact alias '{name}' in {chosen['scope_kind']}:{chosen['scope_id']}"
        if others:
            reason += f" (also matched {len(others)} other entit{'y' if len(others) == 1 else 'ies'}; the writer's scope wins, then the oldest)"
        return EntityMatch(chosen["id"], False, others, reason)
    entity_id = create_entity(conn, name=name, kind=kind, scope=writer_scope, now=now, actor=actor)
    return EntityMatch(entity_id, True, [], f"no entity with alias '{name}' in readable scopes; created a provisional one in {writer_scope.key}")


def find_principal_entity(conn: sqlite3.Connection, user_id: str) -> str | None:
    """The id of ``user_id``'s own person entity in ``user:<user_id>``, if it exists (the one query for it)."""
    return queries.principal_entity_id(conn, user_id, normalise_alias(user_id))


def principal_entity(conn: sqlite3.Connection, *, user_id: str, now: str, actor: str) -> EntityMatch:
    """The person entity of ``user_id`` in ``user:<user_id>``, created on first use."""
    scope = Scope("user", user_id)
    found = find_principal_entity(conn, user_id)
    if found:
        return EntityMatch(found, False, [], f"principal person entity of user {user_id}")
    entity_id = create_entity(conn, name=user_id, kind="person", scope=scope, now=now, actor=actor, status="confirmed")
    return EntityMatch(entity_id, True, [], f"created the principal person entity of user {user_id}")


def link(conn: sqlite3.Connection, record_id: str, entity_id: str, role: str) -> None:
    queries.link_record_entity(conn, record_id, entity_id, role)
