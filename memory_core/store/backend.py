"""Which store backend a target names, and opening it.

A store target is either a file path (SQLite, the embedded default) or a ``postgresql://`` /
``postgres://`` URL (PostgreSQL with pgvector, :mod:`memory_core.store.pg`). The same target
string is accepted everywhere a store path is: ``MemoryService.open``, the CLI's ``--path`` and
``MEMORY_STORE``. The PostgreSQL modules (and psycopg) are imported only for a URL, so an
SQLite-only installation never needs them.

Code that needs to know which backend it talks to asks :func:`backend_of` with the store or a
connection; only the capability modules do (full text, dense search, erasure, doctor, backup).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .urls import redact_url  # noqa: F401 - re-exported for callers that hold a target

SQLITE = "sqlite"
POSTGRES = "postgresql"
_URL_PREFIXES = ("postgresql://", "postgres://")


def is_postgres_url(target: str | Path) -> bool:
    """True for a PostgreSQL connection URL."""
    return str(target).startswith(_URL_PREFIXES)


def backend_of(obj: Any) -> str:
    """``"sqlite"`` or ``"postgresql"`` for a store or one of its connections."""
    return getattr(obj, "backend", SQLITE)


def open_store(target: str | Path, now: str, *, read_only: bool = False):
    """Open the store ``target`` names: a file path or a PostgreSQL URL.

    By default it is created or migrated as needed. ``read_only`` opens an existing store without
    writing anything (no creation, no migration; see ``Store.open_readonly``): what read-only
    commands (doctor, stats, grants, the source of a copy) use.
    """
    if is_postgres_url(target):
        from ..extras import require_extra

        require_extra("postgres", "a postgresql:// store")
        from .pg.store import PgStore

        return PgStore.open_readonly(str(target)) if read_only else PgStore.open(str(target), now)
    from .db import Store

    return Store.open_readonly(target) if read_only else Store.open(target, now)


def require_store(target: str | Path) -> None:
    """Raise ``StoreUnusableError`` unless ``target`` already holds a store (a missing or empty file, a
    directory, or a database without our tables); writes nothing. Commands other than ``init`` call
    it first, so a mistyped path is an error rather than a new empty store."""
    if is_postgres_url(target):
        open_store(target, "", read_only=True).close()
    else:
        from .opening import store_file

        store_file(target, must_exist=True)
