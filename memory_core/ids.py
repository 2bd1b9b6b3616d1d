"""Opaque identifiers with a readable prefix (``mem_``, ``ent_``, ``ses_``, ``srch_``, ``run_``)."""

from __future__ import annotations

import secrets


def new_id(prefix: str) -> str:
    """A new random id such as ``mem_0123abcd4567ef89``."""
    return f"{prefix}_{secrets.token_hex(8)}"
