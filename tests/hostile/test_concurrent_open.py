"""Defect 3: several processes opening (and so migrating) a fresh store at the same moment."""

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memory_core.store.db import Store
from memory_core.store.migrations import MIGRATIONS

OPENER = textwrap.dedent(
    """
    import sys, time
    from memory_core import FixedClock, MemoryService, load_settings
    from tests.fakes import HashingEmbedder
    path, start = sys.argv[1], float(sys.argv[2])
    embedder = HashingEmbedder()
    while time.time() < start:  # every process starts migrating at the same instant
        time.sleep(0.001)
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=embedder)
    service.close()
    print("opened")
    """
)


@pytest.mark.parametrize("round_", range(3))
def test_eight_processes_open_a_fresh_store_at_once(tmp_path, round_):
    path = tmp_path / "fresh.sqlite"
    start = time.time() + 4.0  # long enough for every interpreter to import and wait
    procs = [
        subprocess.Popen([sys.executable, "-c", OPENER, str(path), repr(start)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
        for _ in range(8)
    ]
    results = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in procs]
    failures = [err for code, _, err in results if code != 0]
    assert not failures, failures[0]
    assert all(out.strip() == "opened" for _, out, _ in results)
    store = Store.open(path, "2026-03-05T10:00:00.000000Z")
    applied = [r[0] for r in store.conn.execute("SELECT number FROM schema_migrations ORDER BY number")]
    assert applied == sorted(MIGRATIONS)
    assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store.close()
