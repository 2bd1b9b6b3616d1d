"""kill -9 while write_many is inside a batch's transaction: that batch leaves nothing, earlier ones stay."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.store.doctor import run_doctor
from tests.fakes import HashingEmbedder

ROOT = Path(__file__).resolve().parents[2]

BULK = textwrap.dedent(
    """
    import sys
    from memory_core import FixedClock, MemoryService, load_settings
    from memory_core.ingest.write_types import WriteRequest
    from memory_core.policy.scopes import Scope
    from tests.fakes import HashingEmbedder
    service = MemoryService.open(sys.argv[1], load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    requests = [WriteRequest(type="semantic", content=f"Shelf {n} holds box {n * 3}.", scope=Scope("user", "alice"),
                             source_kind="agent_inference", agent_id="assistant", user_id="alice", actor="t",
                             attribute=f"shelf_{n}") for n in range(30)]

    def progress(done, total):
        if done == 17:  # inside the second batch's transaction, after 7 of its rows were inserted
            print("inside", flush=True)
            sys.stdin.readline()  # held here until the parent kills the process

    service.write_many(requests, service.access("assistant", "alice"), batch_size=10, progress=progress)
    """
)


def test_kill_minus_nine_inside_a_batch_leaves_none_of_it(tmp_path):
    path = tmp_path / "m.sqlite"
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    service.close()
    child = subprocess.Popen([sys.executable, "-c", BULK, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, cwd=ROOT)
    assert child.stdout.readline().strip() == "inside"
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)

    reopened = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    try:
        assert run_doctor(reopened.store, reopened.settings).ok
        contents = [r["content"] for r in reopened.store.query("SELECT content FROM records ORDER BY seq")]
        assert contents == [f"Shelf {n} holds box {n * 3}." for n in range(10)]
        assert reopened.store.scalar("SELECT COUNT(*) FROM write_log") == 10
        assert reopened.index.count() == 10
    finally:
        reopened.close()
