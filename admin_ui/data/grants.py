"""Grants: the table of grants, and a principal's effective access with every reason."""

from __future__ import annotations

from typing import Any

from .pagination import Page, paginate


def grant_rows(service, agent_id: str | None = None, scope_text: str | None = None, page: int = 1,
               page_size: int = 50) -> Page:
    """Grants filtered by agent and scope substring, one page."""
    rows = service.grants(agent_id or None)
    if scope_text and scope_text.strip():
        needle = scope_text.strip().casefold()
        rows = [r for r in rows if needle in r["scope"].casefold()]
    out = [{"agent_id": r["agent_id"], "scope": r["scope"], "read": r["can_read"], "write": r["can_write"],
            "created_at": r["created_at"], "created_by": r["created_by"]} for r in rows]
    return paginate(out, page, page_size)


def grant_form_problems(agent_id: str | None, scope: str | None) -> list[str | None]:
    """What the add-grant form lacks, one entry per field in the order they are drawn (None = fine)."""
    return [
        None if (agent_id or "").strip() else "Give the agent id of the agent to grant access to.",
        None if (scope or "").strip() else "Give the scope to grant, such as project:atlas or user:alice.",
    ]


def grant_choices(service) -> list[str]:
    """Every grant as the revoke form lists it: ``agent → scope``."""
    return [f"{g['agent_id']} → {g['scope']}" for g in service.grants()]


def effective_access(service, agent_id: str, user_id: str) -> list[dict[str, Any]]:
    """What a search by ``agent_id`` acting for ``user_id`` can read and write, one row per scope."""
    return access_rows(service.access(agent_id, user_id))


def access_rows(access) -> list[dict[str, Any]]:
    """One row per scope: readable / writable / ignored, with the policy's reason."""
    data = access.to_dict()
    scopes = sorted(set(data["readable"]) | set(data["writable"]) | set(data["ignored"]))
    rows = []
    for scope in scopes:
        rows.append({
            "scope": scope,
            "read": scope in data["readable"],
            "write": scope in data["writable"],
            "reason": data["readable"].get(scope) or data["writable"].get(scope) or data["ignored"].get(scope),
            "ignored grant": data["ignored"].get(scope, ""),
        })
    return rows
