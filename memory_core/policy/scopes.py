"""Scope identifiers: ``agent:<agent>/<user>`` (private, implicit), ``agent:<agent>``,
``user:<id>``, ``project:<id>`` and ``org:<id>``.

Identifiers may not contain ``/`` (so the private encoding is unambiguous), nor ``:`` or
whitespace, and are at most 128 characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InvalidInputError

SCOPE_KINDS = ("agent", "user", "project", "org")
# fullmatch, not match with "$": "$" also matches before a trailing newline, so "alice\n" passed.
_ID = re.compile(r"[A-Za-z0-9_.@+\-]{1,128}")


def validate_id(value: object, what: str = "id") -> str:
    """Return ``value`` if it is a usable agent/user/project/org id, else raise InvalidInputError."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise InvalidInputError(
            f"{what} must be 1-128 characters of letters, digits, '_', '.', '@', '+' or '-' "
            f"(no '/', ':' or spaces); got {value!r}",
            field=what,
        )
    return value


@dataclass(frozen=True, order=True)
class Scope:
    kind: str
    id: str

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.id}"

    @property
    def is_private(self) -> bool:
        """True for the implicit agent-user pair scope ``agent:<agent>/<user>``."""
        return self.kind == "agent" and "/" in self.id

    @property
    def private_parts(self) -> tuple[str, str] | None:
        if not self.is_private:
            return None
        agent, user = self.id.split("/", 1)
        return agent, user

    def __str__(self) -> str:
        return self.key


def parse_scope(text: object) -> Scope:
    """Parse and validate a scope string."""
    if not isinstance(text, str) or ":" not in text:
        raise InvalidInputError(f"scope must look like 'user:<id>', got {text!r}", field="scope")
    kind, ident = text.split(":", 1)
    if kind not in SCOPE_KINDS:
        raise InvalidInputError(f"unknown scope kind {kind!r}; expected one of {', '.join(SCOPE_KINDS)}", field="scope")
    if kind == "agent" and "/" in ident:
        agent, user = ident.split("/", 1)
        validate_id(agent, "agent_id")
        validate_id(user, "user_id")
    else:
        validate_id(ident, f"{kind} id")
    return Scope(kind, ident)


def private_scope(agent_id: str, user_id: str) -> Scope:
    return Scope("agent", f"{agent_id}/{user_id}")
