"""Open the demo store from a notebook, building it the first time.

By default the notebook works on a scratch copy (SQLite's backup API, so a running admin app on
the same file is no problem) and the built store stays exactly as ``agent-memory seed-demo``
left it. The service runs on the demo's pinned clock and with the demo's offline settings, so
searches, review flags and extraction behave as ``docs/demo.md`` describes.
"""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..clock import FixedClock

REPO = Path(__file__).resolve().parents[2]


def default_demo_path() -> Path:
    """``var/demo.sqlite`` of the repository checkout (what ``make run`` builds), else of the cwd."""
    root = REPO if (REPO / "seed_data").is_dir() else Path.cwd()
    return root / "var" / "demo.sqlite"


def scratch_copy(path: str | Path) -> Path:
    """A consistent copy of the store file at ``path`` in a new temporary directory (removed at exit)."""
    from ..store.db import Store
    from ..store.urls import sqlite_uri

    source = Store.open_readonly(path)  # a store file, not a URL, a missing or a damaged one
    workdir = Path(tempfile.mkdtemp(prefix="agent-memory-notebook-"))
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)
    target = workdir / source.path.name
    try:
        copy = sqlite3.connect(sqlite_uri(target, mode="rwc"), uri=True)
        try:
            source.conn.backup(copy)
        finally:
            copy.close()
    finally:
        source.close()
    return target


def open_demo(path: str | Path | None = None, *, scratch: bool = True, embedder=None,
              progress: Callable[[str], None] | None = print):
    """A ``MemoryService`` on the demo store file at ``path`` (default :func:`default_demo_path`).

    Builds the store there first if it is missing (about 20 s, mostly the model load; the model
    stays loaded for the service). ``scratch`` opens a temporary copy so the notebook's searches
    and extraction runs leave the built store untouched. The demo is an SQLite file: a URL is
    refused (``InvalidInputError``; open a PostgreSQL store with ``MemoryService.open(url)``).
    """
    from ..demo import build_demo_store, demo_settings
    from ..service import MemoryService
    from ..store.db import Store
    from ..store.urls import file_path

    path = file_path(path, what="the demo store file (a PostgreSQL store opens with MemoryService.open)") \
        if path is not None else default_demo_path()
    if not path.exists():
        build_demo_store(path, progress=progress, embedder=embedder)
    opened = scratch_copy(path) if scratch else path
    store = Store.open_readonly(opened)
    try:
        demo_now = store.get_meta("demo_now")
    finally:
        store.close()
    clock = FixedClock(demo_now) if demo_now else None
    return MemoryService.open(opened, demo_settings(), clock=clock, embedder=embedder)
