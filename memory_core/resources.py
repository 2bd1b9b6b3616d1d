"""Where the data files the library ships with live: ``seed_data/``.

The demo world, the host-memory fitness bundle, the evaluation scenarios and the demo sign-in
accounts are files in ``seed_data/`` at the top of the repository. An installed wheel carries the
same files as ``memory_core/seed_data/`` (a symlink to the top-level folder in a checkout, listed in
pyproject.toml's package data), so ``seed-demo``, ``fitness run`` and the scenarios work from an
install too. A checkout's top-level folder wins, so an edit there is what runs.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def seed_root() -> Path:
    """The ``seed_data`` folder: the checkout's, else the one installed inside the package."""
    checkout = _PACKAGE.parent / "seed_data"
    return checkout if checkout.is_dir() else _PACKAGE / "seed_data"
