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
    """A consistent copy of the store at ``path`` in a new temporary directory (removed at exit)."""
    workdir = Path(tempfile.mkdtemp(prefix="agent-memory-notebook-"))
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)
    target = workdir / Path(path).name
    source = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    try:
        copy = sqlite3.connect(target)
        try:
            source.backup(copy)
        finally:
            copy.close()
    finally:
        source.close()
    return target


def open_demo(path: str | Path | None = None, *, scratch: bool = True, embedder=None,
              progress: Callable[[str], None] | None = print):
    """A ``MemoryService`` on the demo store at ``path`` (default :func:`default_demo_path`).

    Builds the store there first if it is missing (about 20 s, mostly the model load; the model
    stays loaded for the service). ``scratch`` opens a temporary copy so the notebook's searches
    and extraction runs leave the built store untouched.
    """
    from ..demo import build_demo_store, demo_settings
    from ..service import MemoryService

    path = Path(path) if path is not None else default_demo_path()
    if not path.exists():
        build_demo_store(path, progress=progress, embedder=embedder)
    opened = scratch_copy(path) if scratch else path
    conn = sqlite3.connect(f"file:{opened.resolve()}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT value FROM store_meta WHERE key = 'demo_now'").fetchone()
    finally:
        conn.close()
    clock = FixedClock(row[0]) if row else None
    return MemoryService.open(opened, demo_settings(), clock=clock, embedder=embedder)
