"""Access decisions from the grant table. Every answer carries a reason for the log and the UI.

Rules (no inheritance between scopes):
- ``agent:<agent>/<user>`` is readable and writable by exactly that agent acting for that user,
  without a grant; grants on private scopes are refused, and a stored one whose user differs from
  the current principal is ignored.
- Every other scope needs a grant row for the agent: ``can_read`` for search/get, ``can_write``
  for writes, revisions and forgets.
- A ``user:<id>`` grant is honoured only while the agent acts for that same user; an agent that
  serves several users never reads one user's memory on another's behalf.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Protocol

from ..errors import NotFoundError
from ..store import grant_queries as queries
from ..store.db import Store
from .scopes import Scope, private_scope


@dataclass(frozen=True)
class Decision:
    allow: bool
    reason: str

    def __bool__(self) -> bool:
        return self.allow


@dataclass
class ScopeAccess:
    """The scopes a principal may read and write, with the reason for each, and ignored grants."""

    agent_id: str
    user_id: str
    readable: dict[str, str] = field(default_factory=dict)
    writable: dict[str, str] = field(default_factory=dict)
    ignored: dict[str, str] = field(default_factory=dict)

    @property
    def readable_keys(self) -> list[str]:
        return sorted(self.readable)

    def can_read(self, scope: Scope | str) -> Decision:
        key = scope if isinstance(scope, str) else scope.key
        if key in self.readable:
            return Decision(True, self.readable[key])
        if key in self.ignored:
            return Decision(False, self.ignored[key])
        return Decision(False, f"agent {self.agent_id} has no read grant on {key}")

    def can_write(self, scope: Scope | str) -> Decision:
        key = scope if isinstance(scope, str) else scope.key
        if key in self.writable:
            return Decision(True, self.writable[key])
        if key in self.ignored:
            return Decision(False, self.ignored[key])
        return Decision(False, f"agent {self.agent_id} has no write grant on {key}")

    def to_dict(self) -> dict:
        return {
            "agent_id": self.agent_id,
            "user_id": self.user_id,
            "readable": dict(sorted(self.readable.items())),
            "writable": dict(sorted(self.writable.items())),
            "ignored": dict(sorted(self.ignored.items())),
        }


class AccessResolver(Protocol):
    """What components receive instead of the service: (agent, user) -> their scopes, with reasons."""

    def __call__(self, agent_id: str, user_id: str) -> ScopeAccess: ...


def resolve_access(conn: sqlite3.Connection, agent_id: str, user_id: str) -> ScopeAccess:
    """Compute the readable and writable scopes of (agent, user) from the grant table."""
    return access_from_grants(agent_id, user_id, queries.agent_grants(conn, agent_id))


def access_from_grants(agent_id: str, user_id: str, grant_rows) -> ScopeAccess:
    """The readable and writable scopes of (agent, user), from the agent's grant rows
    (``scope_kind, scope_id, can_read, can_write``, as ``grant_queries.agent_grants`` reads them)."""
    access = ScopeAccess(agent_id, user_id)
    own = private_scope(agent_id, user_id).key
    access.readable[own] = "implicit private scope of this agent-user pair"
    access.writable[own] = "implicit private scope of this agent-user pair"
    for row in grant_rows:
        scope = Scope(row["scope_kind"], row["scope_id"])
        if scope.is_private:
            # Private scopes are implicit; a stored grant is never honoured, and one naming
            # another user is exactly the leak the rule exists to stop.
            if scope.key != own:
                access.ignored[scope.key] = (
                    f"grant on private scope {scope.key} ignored: it does not belong to user {user_id}"
                )
            continue
        if scope.kind == "user" and scope.id != user_id:
            # A user's scope is that user's memory: an agent serving someone else never reads or
            # writes it, whatever grants the agent holds (see docs/policy.md).
            access.ignored[scope.key] = (
                f"grant on {scope.key} not used: the agent is acting for user {user_id}, and a user scope is only "
                "reachable while acting for its owner"
            )
            continue
        if row["can_read"]:
            access.readable[scope.key] = f"read grant for agent {agent_id} on {scope.key}"
        if row["can_write"]:
            access.writable[scope.key] = f"write grant for agent {agent_id} on {scope.key}"
    return access


def check_grantable(scope: Scope) -> Decision:
    """May a host create a grant on ``scope``?"""
    if scope.is_private:
        return Decision(
            False,
            f"{scope.key} is a private agent-user scope; it is implicit to that pair and cannot be granted",
        )
    return Decision(True, f"{scope.kind} scopes are granted explicitly")


def access_of(store: Store, agent_id: str, user_id: str) -> ScopeAccess:
    """:func:`resolve_access` on the store's connection, under its lock."""
    with store.lock:
        return resolve_access(store.conn, agent_id, user_id)


# -- changing grants (the grant table's only writer) ----------------------------------------------


def save_grant(store: Store, *, agent_id: str, scope: Scope, read: bool, write: bool, now: str, actor: str,
               reason: str | None = None) -> dict:
    """Create or change a grant, with a ``grant.added``/``grant.changed`` event, in one transaction.

    Callers check :func:`check_grantable` and the read/write flags first.
    """
    with store.transaction() as conn:
        previous = queries.grant_flags(conn, agent_id, scope.kind, scope.id)
        queries.upsert_grant(conn, agent_id, scope.kind, scope.id, read, write, now, actor)
        store.append_event(
            conn, at=now, kind="grant.changed" if previous else "grant.added", actor=actor, reason=reason,
            payload={"agent_id": agent_id, "scope": scope.key, "read": read, "write": write,
                     "previous": dict(previous) if previous else None},
        )
    return {"agent_id": agent_id, "scope": scope.key, "read": read, "write": write}


def delete_grant(store: Store, *, agent_id: str, scope: Scope, now: str, actor: str, reason: str | None = None) -> None:
    """Remove an agent's grant on a scope (NotFoundError when there is none), with a ``grant.revoked`` event."""
    with store.transaction() as conn:
        if not queries.remove_grant(conn, agent_id, scope.kind, scope.id):
            raise NotFoundError(f"agent {agent_id} has no grant on {scope.key}")
        store.append_event(conn, at=now, kind="grant.revoked", actor=actor, reason=reason, payload={"agent_id": agent_id, "scope": scope.key})


def list_grants(store: Store, agent_id: str | None = None) -> list[dict]:
    """Every grant (or one agent's), ordered by agent and scope."""
    with store.lock:
        rows = queries.grant_rows(store.conn, agent_id)
    return [{**dict(r), "can_read": bool(r["can_read"]), "can_write": bool(r["can_write"])} for r in rows]
