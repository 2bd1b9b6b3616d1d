"""The Keys page's logic: API keys of the MCP server, listed with their last use, created (the token
is returned once, never kept), revoked. Every change is checked against the signed-in role and
audited with its reason (``key.created`` / ``key.revoked`` events)."""

from __future__ import annotations

from typing import Any

from memory_core.mcp.keys import create_key, list_keys, revoke_key

from ..auth.accounts import Identity
from .actions import require, require_reason
from .pagination import Page, paginate

KIND_HELP = {
    "model": "opens MCP sessions: the five memory tools, as this principal (an MCP client's key)",
    "host": "reports a host's conversation through hooks (agent-memory hook --url); refused for MCP sessions",
}


def key_rows(service, *, include_revoked: bool = True, page: int = 1, page_size: int = 50) -> Page:
    """One page of keys for the table (never a token or its hash)."""
    rows = [{"key": r["id"], "kind": r["kind"], "agent": r["agent_id"], "user": r["user_id"], "project": r["project_id"],
             "label": r["label"], "created_at": r["created_at"], "created_by": r["created_by"],
             "last_used_at": r["last_used_at"], "state": "revoked" if r["revoked_at"] else "live",
             "revoked_at": r["revoked_at"], "revoked_by": r["revoked_by"], "revoke_reason": r["revoke_reason"]}
            for r in list_keys(service, include_revoked=include_revoked)]
    return paginate(rows, page, page_size)


def live_key_labels(service) -> dict[str, str]:
    """Live keys for the revoke choice: id -> a readable label."""
    out = {}
    for r in list_keys(service, include_revoked=False):
        label = f" · {r['label']}" if r["label"] else ""
        out[r["id"]] = f"{r['id']} · {r['kind']} · {r['agent_id']}/{r['user_id']}{label}"
    return out


def create(service, identity: Identity, *, kind: str, agent_id: str, user_id: str, project_id: str | None,
           label: str | None, reason: str) -> tuple[dict[str, Any], str]:
    """A new key and its token (shown once by the page, never stored)."""
    require(identity, "grant")
    return create_key(service, kind=kind, agent_id=(agent_id or "").strip(), user_id=(user_id or "").strip(),
                      project_id=(project_id or "").strip() or None, label=(label or "").strip() or None,
                      actor=identity.actor, reason=require_reason(reason))


def revoke(service, identity: Identity, key_id: str, reason: str) -> dict[str, Any]:
    """Revoke a key now: its token gets 401 from the next request on."""
    require(identity, "grant")
    return revoke_key(service, key_id, actor=identity.actor, reason=require_reason(reason))


def client_snippet(row: dict[str, Any], token: str) -> str:
    """Where the new token goes, for the page to show beside it (text, never markup)."""
    if row["kind"] == "host":
        return f"export AGENT_MEMORY_HOST_KEY={token}\nagent-memory hook Stop --url http://127.0.0.1:8765  # in a hook command"
    return ("claude mcp add --transport http agent-memory http://127.0.0.1:8765/mcp \\\n"
            f"  --header \"Authorization: Bearer {token}\"")
