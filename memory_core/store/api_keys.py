"""The SQL of the MCP server's API keys (migration 100): insert, look up by token hash, list, revoke.

Rules (token format, hashing, kinds) live in ``memory_core.mcp.keys``; this module only reads and
writes ``api_keys`` and the audit events of key changes.
"""

from __future__ import annotations

from typing import Any

from .db import Store

COLUMNS = ("id, kind, agent_id, user_id, project_id, label, created_at, created_by, last_used_at, revoked_at, "
           "revoked_by, revoke_reason")


def insert_key(store: Store, row: dict[str, Any], *, actor: str, reason: str | None = None) -> None:
    """Add a key and its ``key.created`` event in one transaction (the row holds the token's hash only)."""
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO api_keys (id, kind, agent_id, user_id, project_id, label, token_hash, created_at, created_by) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            (row["id"], row["kind"], row["agent_id"], row["user_id"], row["project_id"], row["label"], row["token_hash"],
             row["created_at"], actor))
        store.append_event(conn, at=row["created_at"], kind="key.created", actor=actor, reason=reason, payload={
            "key_id": row["id"], "kind": row["kind"], "agent_id": row["agent_id"], "user_id": row["user_id"],
            "project_id": row["project_id"]})


def key_by_hash(store: Store, token_hash: str) -> dict[str, Any] | None:
    """The key whose token hashes to ``token_hash`` (revoked ones too), or None."""
    row = store.query_one(f"SELECT {COLUMNS} FROM api_keys WHERE token_hash = ?", (token_hash,))
    return dict(row) if row is not None else None


def key_row(store: Store, key_id: str) -> dict[str, Any] | None:
    """One key by id (never its hash), or None."""
    row = store.query_one(f"SELECT {COLUMNS} FROM api_keys WHERE id = ?", (key_id,))
    return dict(row) if row is not None else None


def list_keys(store: Store, *, include_revoked: bool = True) -> list[dict[str, Any]]:
    """Every key, newest first (never their hashes)."""
    where = "" if include_revoked else "WHERE revoked_at IS NULL "
    return [dict(r) for r in store.query(f"SELECT {COLUMNS} FROM api_keys {where}ORDER BY created_at DESC, id")]


def revoke_key(store: Store, key_id: str, *, at: str, actor: str, reason: str | None) -> bool:
    """Mark a live key revoked (with its ``key.revoked`` event); False when it was already revoked."""
    with store.transaction() as conn:
        cur = conn.execute("UPDATE api_keys SET revoked_at = ?, revoked_by = ?, revoke_reason = ? "
                           "WHERE id = ? AND revoked_at IS NULL", (at, actor, reason, key_id))
        if cur.rowcount != 1:
            return False
        store.append_event(conn, at=at, kind="key.revoked", actor=actor, reason=reason, payload={"key_id": key_id})
        return True


def touch_key(store: Store, key_id: str, at: str) -> None:
    """Record that the key was used at ``at`` (only moves forward)."""
    with store.transaction() as conn:
        conn.execute("UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
                     (at, key_id, at))
