"""Opening SQLite store files: what a file must be before anything is written, read-only opens, and
damage turned into the library's own error.

Every connection to a store file goes through :func:`connect`, by an escaped ``file:`` URI
(:func:`memory_core.store.urls.sqlite_uri`), so a path holding ``?``, ``#`` or ``%`` opens that
file and no other. A read-only open (``mode=ro``, ``query_only``) never creates, migrates or
switches the journal mode: ``doctor``, ``stats`` and the other read-only commands leave a missing,
empty or damaged file exactly as they found it. SQLite reports damage (a truncated file, a
clobbered header, flipped bytes, garbage, a WAL of another database) as ``sqlite3.DatabaseError``
from whichever statement first reads the bad page; :func:`damage_guard` turns that into a
:class:`~memory_core.errors.StoreUnusableError` naming the file and the way back (a backup).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import MigrationError, StoreUnusableError
from .migrations import MIGRATIONS
from .urls import file_path, sqlite_uri

BUSY_TIMEOUT_MS = 30_000
STORE_TABLES = ("schema_migrations", "store_meta", "records")
_DAMAGE_NAMES = ("SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_IOERR_SHORT_READ")


def store_file(target: str | Path, *, must_exist: bool) -> Path:
    """``target`` as a store file path: never a URL or a directory; with ``must_exist``, a non-empty file."""
    path = file_path(target, what="a store file (or a postgresql:// URL)")
    shown = str(path)
    if path.is_dir():
        raise StoreUnusableError(f"{shown} is a directory, not a store file; give the path of the store file in it",
                                 path=shown, problem="not_a_store")
    if not must_exist:
        return path
    if not path.exists():
        raise StoreUnusableError(f"no store at {shown} (agent-memory init --path {shown} creates one)", path=shown,
                                 problem="missing")
    if path.stat().st_size == 0:
        raise StoreUnusableError(f"{shown} is an empty file (0 bytes) and holds no store; if it should, restore it from "
                                 f"a backup (agent-memory restore BACKUP --path {shown} --yes)", path=shown, problem="empty")
    return path


def is_damage(exc: BaseException) -> bool:
    """Whether an ``sqlite3`` error means the file's bytes are bad (not a lock, a constraint or a bug)."""
    if not isinstance(exc, sqlite3.DatabaseError) or getattr(exc, "pgcode", None) is not None:
        return False  # (PostgreSQL's errors arrive as sqlite3 classes too, with their SQLSTATE: never file damage)
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    if name.startswith(_DAMAGE_NAMES):
        return True
    if isinstance(exc, sqlite3.OperationalError):
        return "could not decode" in str(exc).lower()  # text bytes that are not UTF-8: a flipped byte in a row
    return type(exc) is sqlite3.DatabaseError  # SQLite's "malformed" and "not a database"


def damaged(path: str | Path, exc: BaseException) -> StoreUnusableError:
    """The error for a damaged store file (``exc`` is what SQLite said)."""
    shown = str(path)
    said = " ".join(str(exc).split())
    return StoreUnusableError(
        f"the store file {shown} is damaged ({said}); restore it from a backup with agent-memory restore BACKUP "
        f"--path {shown} --yes (the damaged file is kept beside it), and run agent-memory doctor --path {shown} "
        "for details", path=shown, problem="damaged", sqlite_error=said)


@contextmanager
def damage_guard(path: str | Path) -> Iterator[None]:
    """Re-raise SQLite's damage errors inside the block as :class:`StoreUnusableError` for ``path``."""
    try:
        yield
    except sqlite3.Error as exc:
        if is_damage(exc):
            raise damaged(path, exc) from exc
        raise
    except MigrationError as exc:  # a migration that read a bad page reports it as its own failure
        if exc.__cause__ is not None and is_damage(exc.__cause__):
            raise damaged(path, exc.__cause__) from exc
        raise


def connect(path: Path, *, read_only: bool, query_only: bool = True) -> sqlite3.Connection:
    """A connection to the file at ``path`` by its escaped URI (``mode=ro`` or ``rwc``), rows as
    ``sqlite3.Row``. A read-only one is also ``query_only`` unless told otherwise (``VACUUM INTO``
    writes another file, which ``query_only`` forbids; ``mode=ro`` still keeps this one untouched)."""
    try:
        conn = sqlite3.connect(sqlite_uri(path, mode="ro" if read_only else "rwc"), uri=True, isolation_level=None,
                               check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.OperationalError as exc:
        raise StoreUnusableError(f"cannot open {path}: {exc}", path=str(path), problem="unreadable") from exc
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    if read_only and query_only:
        conn.execute("PRAGMA query_only=ON")
    return conn


def store_migrations(conn: sqlite3.Connection, path: Path, *, allow_blank: bool) -> list[int]:
    """The migrations recorded in the file, after checking it is an agent-memory store this code can read.

    A blank database (no tables) is accepted only with ``allow_blank`` (a new store is created
    there); an SQLite database of something else is refused before anything is written to it.
    """
    with damage_guard(path):
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables and allow_blank:
            return []
        if not set(STORE_TABLES) <= tables:
            raise StoreUnusableError(
                f"{path} is an SQLite database but not an agent-memory store (it has no "
                f"{', '.join(t for t in STORE_TABLES if t not in tables)} table); check the path",
                path=str(path), problem="not_a_store")
        applied = [r[0] for r in conn.execute("SELECT number FROM schema_migrations ORDER BY number")]
    newest = max(MIGRATIONS)
    if applied and max(applied) > newest:
        raise MigrationError(f"store schema is at migration {max(applied)}, newer than this code ({newest})",
                             store_version=max(applied), code_version=newest)
    return applied


def unattended_wal(path: Path) -> bool:
    """Whether a non-empty WAL lies beside the file without its ``-shm`` (look before connecting:
    the first connection creates the ``-shm``)."""
    wal = Path(f"{path}-wal")
    return wal.is_file() and wal.stat().st_size > 0 and not Path(f"{path}-shm").exists()


def check_wal(conn: sqlite3.Connection, path: Path, unattended: bool) -> None:
    """A WAL found without its ``-shm`` (files copied or moved, a backup put back over a store with
    ``cp``) is replayed into the file at the next checkpoint, whatever database wrote it. In that
    situation only, check the two fit (``quick_check``) and refuse the store if they do not."""
    if not unattended:
        return
    with damage_guard(path):
        rows = [r[0] for r in conn.execute("PRAGMA quick_check(5)").fetchall()]
    if rows != ["ok"]:
        raise damaged(path, sqlite3.DatabaseError(f"the file and the WAL beside it ({path.name}-wal) do not agree: "
                                                  + "; ".join(rows)[:300]))


def forget_probe(conn: sqlite3.Connection, path: Path, unattended: bool) -> None:
    """Close a read-only look that refused the file; remove the ``-shm`` it made beside an unattended
    WAL, so the next open finds the files as they were (and checks them again)."""
    conn.close()
    if unattended:
        Path(f"{path}-shm").unlink(missing_ok=True)


def close_quietly(conn: sqlite3.Connection, path: Path) -> None:
    """Close ``conn`` without SQLite's checkpoint on the last close, which would copy a WAL that does
    not belong to the file into it for good: a read-only connection stays open across the close."""
    guard = None
    try:
        guard = sqlite3.connect(sqlite_uri(path, mode="ro"), uri=True)
        guard.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        pass
    finally:
        conn.close()
        if guard is not None:
            guard.close()


def pending_migrations(applied: list[int]) -> list[int]:
    """The registered migrations ``applied`` lacks (an older store)."""
    return sorted(set(MIGRATIONS) - set(applied))
