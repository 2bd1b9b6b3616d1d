"""Who is signed in and what they may do: accounts, roles, permissions, demo sign-in.

Local accounts live in a TOML file (``settings.ui.accounts_file``)::

    [[accounts]]
    username = "rita"
    role = "reviewer"              # viewer | reviewer | operator | admin | user
    password_hash = "$argon2id$..."  # python -m admin_ui.auth hash-password
    display_name = "Rita (reviewer)"
    email = "rita@example.com"     # optional: maps an OIDC sign-in to this account's role
    user_id = "alice"              # required for role "user": the memory user it is bound to

Passwords are verified with argon2-cffi. Nothing here touches Streamlit, so it is unit-tested
directly; :mod:`admin_ui.auth.signin` wires it to the session.
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from memory_core.policy.scopes import parse_scope, validate_id

ROLES = ("viewer", "reviewer", "operator", "admin", "user")
STAFF_ROLES = ("viewer", "reviewer", "operator", "admin")

# Which roles may do what. "forget" for the user role is limited to records in scopes they own.
PERMISSIONS: dict[str, frozenset[str]] = {
    "view_store": frozenset(STAFF_ROLES),
    "search": frozenset(STAFF_ROLES),
    "review": frozenset({"reviewer", "operator", "admin"}),
    "forget": frozenset({"reviewer", "operator", "admin", "user"}),
    "grant": frozenset({"operator", "admin"}),
    # write and edit memories in the app: a user about themselves, staff for any user (docs/write-path.md)
    "write_memory": frozenset({"operator", "admin", "user"}),
    "merge": frozenset({"operator", "admin"}),
    "extract": frozenset({"operator", "admin"}),
    "maintain": frozenset({"admin"}),
    # download memory in the export format: a user only the scopes they own (owns_scope), staff any
    "export": frozenset({"operator", "admin", "user"}),
}

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
DEMO_USERNAME = "demo-operator"

_hasher = PasswordHasher()
# Verified against when the username is unknown, so a wrong name costs as long as a wrong password.
_DUMMY_HASH = _hasher.hash("not-a-real-password")


class AccountsError(ValueError):
    """The accounts file is missing or malformed."""


@dataclass(frozen=True)
class Identity:
    """A signed-in person. ``actor`` is what the audit log records for their actions."""

    username: str
    role: str
    user_id: str | None = None
    display_name: str | None = None
    method: str = "password"

    @property
    def actor(self) -> str:
        return f"ui:{self.username}"

    @property
    def label(self) -> str:
        name = self.display_name or self.username
        bound = f" {self.user_id}" if self.role == "user" and self.user_id else ""
        return f"{name} · {self.role}{bound}"

    def can(self, permission: str) -> bool:
        """Does this role allow ``permission`` at all (see :data:`PERMISSIONS`)?"""
        return self.role in PERMISSIONS.get(permission, frozenset())

    def owns_scope(self, scope: str) -> bool:
        """A user owns ``user:<id>`` and every private ``agent:<agent>/<id>``; staff see every scope."""
        if self.role != "user":
            return True
        if not self.user_id:
            return False
        parsed = parse_scope(scope)
        if parsed.kind == "user":
            return parsed.id == self.user_id
        parts = parsed.private_parts
        return parts is not None and parts[1] == self.user_id


@dataclass(frozen=True)
class Account:
    username: str
    role: str
    password_hash: str | None = None
    display_name: str | None = None
    email: str | None = None
    user_id: str | None = None

    def identity(self, method: str = "password") -> Identity:
        return Identity(self.username, self.role, self.user_id, self.display_name, method)


def parse_accounts(data: dict) -> dict[str, Account]:
    """Validate the parsed TOML of an accounts file; returns accounts by username."""
    accounts: dict[str, Account] = {}
    for i, raw in enumerate(data.get("accounts", [])):
        where = f"accounts[{i}]"
        unknown = set(raw) - {"username", "role", "password_hash", "display_name", "email", "user_id"}
        if unknown:
            raise AccountsError(f"{where}: unknown keys {sorted(unknown)}")
        username = str(raw.get("username", "")).strip()
        role = raw.get("role")
        if not username:
            raise AccountsError(f"{where}: username is required")
        if role not in ROLES:
            raise AccountsError(f"{where} ({username}): role must be one of {', '.join(ROLES)}")
        user_id = raw.get("user_id")
        if role == "user":
            if not user_id:
                raise AccountsError(f"{where} ({username}): role 'user' needs the user_id it is bound to")
            validate_id(user_id, "user_id")
        if username in accounts:
            raise AccountsError(f"{where}: username {username!r} appears twice")
        accounts[username] = Account(username, role, raw.get("password_hash"), raw.get("display_name"),
                                     raw.get("email"), user_id)
    return accounts


def load_accounts(path: str | Path | None) -> dict[str, Account]:
    """Accounts from a TOML file; no file configured means no local accounts."""
    if not path:
        return {}
    path = Path(path)
    if not path.is_file():
        raise AccountsError(f"accounts file {path} does not exist")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise AccountsError(f"accounts file {path} is not valid TOML: {exc}") from exc
    return parse_accounts(data)


def hash_password(password: str) -> str:
    """An argon2id hash for an accounts file."""
    return _hasher.hash(password)


def authenticate(accounts: dict[str, Account], username: str, password: str) -> Identity | None:
    """The identity for a correct username and password, else None (same cost either way)."""
    account = accounts.get(username.strip())
    stored = account.password_hash if account and account.password_hash else _DUMMY_HASH
    try:
        _hasher.verify(stored, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return None
    if account is None or not account.password_hash:
        return None
    return account.identity("password")


def identity_for_oidc(accounts: dict[str, Account], email: str | None) -> Identity | None:
    """Map an OIDC sign-in to the account with the same e-mail; unknown people get no access."""
    if not email:
        return None
    for account in accounts.values():
        if account.email and account.email.casefold() == email.casefold():
            return account.identity("oidc")
    return None


def demo_sign_in_allowed(demo_mode: bool, server_address: str | None) -> tuple[bool, str]:
    """Demo auto sign-in needs demo mode on and a server bound to localhost only."""
    if not demo_mode:
        return False, "demo mode is off"
    if (server_address or "").strip() not in LOCAL_HOSTS:
        return False, f"the server is bound to {server_address or 'every interface'}, not localhost"
    return True, "demo mode on a localhost-only server"


def demo_identity() -> Identity:
    return Identity(DEMO_USERNAME, "operator", display_name="Demo operator", method="demo")


def main(argv: list[str] | None = None) -> int:
    """``python -m admin_ui.auth hash-password``: print an argon2 hash for an accounts file."""
    import getpass

    args = sys.argv[1:] if argv is None else argv
    if args[:1] != ["hash-password"]:
        print("usage: python -m admin_ui.auth hash-password", file=sys.stderr)
        return 2
    password = getpass.getpass("password: ")
    if password != getpass.getpass("again: "):
        print("passwords differ", file=sys.stderr)
        return 1
    print(hash_password(password))
    return 0
