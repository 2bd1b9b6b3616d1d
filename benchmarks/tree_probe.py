"""Running one benchmark probe on another source tree: the shared half of the A/B scripts.

``pipeline_ab`` and ``tree_compare`` time two checkouts against each other by running their own
``--probe`` mode in a fresh process whose ``PYTHONPATH`` is the tree under test, on a private copy
of the store. The copy, the environment and the run live here, once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path


def copy_store(store: Path, into: Path, *, side_files: bool) -> Path:
    """A copy of ``store`` in folder ``into``; with ``side_files`` also its ``.ivf`` and ``.vectors``
    files, so the tree under test does not rebuild them at open."""
    copy = into / "store.sqlite"
    shutil.copy(store, copy)
    for suffix in (".ivf", ".vectors") if side_files else ():
        if Path(f"{store}{suffix}").exists():
            shutil.copy(f"{store}{suffix}", f"{copy}{suffix}")
    return copy


def probe_env(tree: Path) -> dict[str, str]:
    """The probe's environment: the tree first on the path, offline models, no MEMORY_ settings
    from the caller, one thread each (benchmarks/README.md's advice on a small shared machine)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.update({"PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "MEMORY_EMBEDDER__TORCH_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    return env


def run_probe(script: str | Path, tree: Path, args: list[str], cwd: Path) -> dict:
    """``script --probe *args`` with ``tree`` on the path; its last stdout line, read as JSON."""
    done = subprocess.run([sys.executable, str(script), "--probe", *args], capture_output=True, text=True,
                          env=probe_env(tree), cwd=cwd)
    if done.returncode != 0:
        raise RuntimeError(f"probe of {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
