"""API keys of the MCP server: create (the token is returned once), list, revoke, verify.

A token is ``am_model_<43 characters>`` or ``am_host_<43 characters>``: 32 random bytes from
:mod:`secrets`, URL-safe base64, after a prefix that says its kind (so a secret scanner, or a
person, can tell what a leaked one is). The store keeps only the token's SHA-256, never the token.

Why SHA-256 and not argon2 (which the admin app uses for passwords): a slow, salted hash protects a
*low-entropy* secret a person chose from offline guessing. A 256-bit random token cannot be guessed
whatever the hash, so a fast unsalted hash loses nothing, and it lets a request find its key with
one indexed lookup. argon2 would cost tens of milliseconds per request (it is built to) and would
need the key id inside the token to know which hash to verify.

``kind`` separates two uses. A **model key** opens MCP sessions: the five memory tools, as its
principal. A **host key** reports a host's conversation through the hook endpoint, which becomes a
transcript that session-end extraction trusts as the user's own words. A model key is refused at
the hook endpoint, and a host key at the MCP endpoint: a model that can call tools can never write
a transcript. A key names a principal; grants still decide what that principal may read and write.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..clock import format_ts, parse_ts
from ..errors import InvalidInputError, NotFoundError
from ..ids import new_id
from ..inputs import check_text
from ..policy.scopes import validate_id
from ..store import api_keys

log = logging.getLogger(__name__)

KINDS = ("model", "host")
TOKEN_PREFIX = {"model": "am_model_", "host": "am_host_"}
MAX_LABEL_CHARS = 200
MAX_TOKEN_CHARS = 200  # anything longer is not one of ours; refused before hashing


@dataclass(frozen=True)
class KeyPrincipal:
    """Who a verified token speaks for."""

    key_id: str
    kind: str
    agent_id: str
    user_id: str
    project_id: str | None


def hash_token(token: str) -> str:
    """The stored form of a token: hex SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_key(service, *, kind: str, agent_id: str, user_id: str, project_id: str | None = None,
               label: str | None = None, actor: str, reason: str | None = None) -> tuple[dict[str, Any], str]:
    """A new key for the principal; returns (its row, the token). The token is not stored anywhere;
    ``reason`` goes to the ``key.created`` audit event."""
    if kind not in KINDS:
        raise InvalidInputError(f"kind must be one of {', '.join(KINDS)}", field="kind")
    validate_id(agent_id, "agent_id")
    validate_id(user_id, "user_id")
    if project_id is not None:
        validate_id(project_id, "project_id")
    if label is not None:
        if not isinstance(label, str) or len(label) > MAX_LABEL_CHARS:
            raise InvalidInputError(f"label must be text of at most {MAX_LABEL_CHARS} characters", field="label")
        check_text(label, "label")
        label = label.strip() or None
    if not isinstance(actor, str) or not actor.strip():
        raise InvalidInputError("creating a key needs the actor who does it", field="actor")
    if reason is not None:
        check_text(reason, "reason")
    token = TOKEN_PREFIX[kind] + secrets.token_urlsafe(32)
    row = {"id": new_id("key"), "kind": kind, "agent_id": agent_id, "user_id": user_id, "project_id": project_id,
           "label": label, "token_hash": hash_token(token), "created_at": format_ts(service.clock.now())}
    api_keys.insert_key(service.store, row, actor=actor, reason=reason)
    stored = api_keys.key_row(service.store, row["id"])
    assert stored is not None
    return stored, token


def list_keys(service, *, include_revoked: bool = True) -> list[dict[str, Any]]:
    """Every key with its principal, creation, last use and revocation (never a token or hash)."""
    return api_keys.list_keys(service.store, include_revoked=include_revoked)


def revoke_key(service, key_id: str, *, actor: str, reason: str | None = None) -> dict[str, Any]:
    """Revoke a key now: every later request with its token gets 401. Returns the key's row."""
    if not isinstance(key_id, str) or api_keys.key_row(service.store, key_id) is None:
        raise NotFoundError(f"no key {str(key_id)[:80]!r}", key_id=str(key_id)[:80])
    if reason is not None:
        check_text(reason, "reason")
    if not api_keys.revoke_key(service.store, key_id, at=format_ts(service.clock.now()), actor=actor, reason=reason):
        raise InvalidInputError(f"key {key_id} is already revoked", field="key_id")
    row = api_keys.key_row(service.store, key_id)
    assert row is not None
    return row


def verify_token(service, token: object, *, touch_interval_s: float = 60.0) -> KeyPrincipal | None:
    """The principal of a live key with this token, else None (unknown, revoked or malformed alike).

    Records the key's last use, at most once per ``touch_interval_s``. That write is bookkeeping: if
    it fails (the store is locked, a connection dropped) the key still verifies, the failure is
    logged with the key's id (never the token), and the next request tries the write again.
    """
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_CHARS or not token.isascii():
        return None
    row = api_keys.key_by_hash(service.store, hash_token(token))
    if row is None or row["revoked_at"] is not None:
        return None
    now = service.clock.now()
    last = row["last_used_at"]
    if last is None or parse_ts(last) <= now - timedelta(seconds=touch_interval_s):
        try:
            api_keys.touch_key(service.store, row["id"], format_ts(now))
        except Exception as exc:  # noqa: BLE001 - the request is served; last_used_at is still old, so it is retried
            log.warning("could not record the last use of key %s (%s); the request is served, the write is tried "
                        "again at the key's next request", row["id"], type(exc).__name__)
    return KeyPrincipal(row["id"], row["kind"], row["agent_id"], row["user_id"], row["project_id"])
