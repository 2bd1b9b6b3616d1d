"""Opaque identifiers with a readable prefix (``mem_``, ``ent_``, ``ses_``, ``srch_``, ``run_``)."""

from __future__ import annotations

import re
import secrets

# A generated id: a lower-case prefix, "_" and 16 hex digits (fullmatch: no trailing newline).
_GENERATED = re.compile(r"[a-z]{2,8}_[0-9a-f]{16}")


def new_id(prefix: str) -> str:
    """A new random id such as ``mem_0123abcd4567ef89``."""
    return f"{prefix}_{secrets.token_hex(8)}"


def is_generated_id(value: object, prefix: str | None = None) -> bool:
    """True if ``value`` is exactly an id :func:`new_id` could have made (with ``prefix`` if given)."""
    if not isinstance(value, str) or not _GENERATED.fullmatch(value):
        return False
    return prefix is None or value.startswith(prefix + "_")
