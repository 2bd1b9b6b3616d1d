"""kill -9 in the middle of writes and forgets: the store reopens whole, and every record is
either fully live or fully forgotten (never half-erased)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.store.doctor import run_doctor
from tests.fakes import HashingEmbedder

ROOT = Path(__file__).resolve().parents[2]

CHURN = textwrap.dedent(
    """
    import sys
    from memory_core import FixedClock, MemoryService, load_settings
    from tests.fakes import HashingEmbedder
    service = MemoryService.open(sys.argv[1], load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    session = service.start_session(agent_id="assistant", user_id="alice")
    print("churning", flush=True)
    i = 0
    while True:
        made = session.call_tool("memory_write", {"type": "semantic", "content": f"Fact {i}: the locker holds parcel {i}.",
                                                  "attribute": f"locker_{i % 7}"})
        if i % 2 == 0:
            session.call_tool("memory_forget", {"record_id": made["record_id"], "reason": "churn"})
        i += 1
        print(i, flush=True)  # the test kills the process after a given number of operations
    """
)


def wait_for_operations(child, count: int) -> None:
    """Read the child's progress lines until it has finished ``count`` write/forget rounds (it goes
    on churning: the kill lands in whichever statement it is in by then)."""
    for line in child.stdout:
        if int(line) >= count:
            return
    raise AssertionError("the churning process ended before it was killed")


@pytest.mark.parametrize("rounds", [5, 30, 80])
def test_kill_minus_nine_mid_forget_leaves_a_whole_store(tmp_path, rounds):
    path = tmp_path / "m.sqlite"
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    service.close()
    child = subprocess.Popen([sys.executable, "-c", CHURN, str(path)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert child.stdout.readline().strip() == "churning"
    wait_for_operations(child, rounds)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=10)

    reopened = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    report = run_doctor(reopened.store, reopened.settings)
    assert report.ok, report.text()
    conn = reopened.store.conn
    half = conn.execute(
        "SELECT COUNT(*) FROM records WHERE (status = 'deleted') != (content = '')"
    ).fetchone()[0]
    assert half == 0
    assert conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] > 0
    session = reopened.start_session(agent_id="assistant", user_id="alice")
    assert session.call_tool("memory_search", {"query": "locker parcel"})["ok"]
    made = session.call_tool("memory_write", {"type": "semantic", "content": "The user keeps a spare key.", "attribute": "spare_key"})
    assert session.call_tool("memory_forget", {"record_id": made["record_id"], "reason": "after the crash"})["ok"]
    reopened.close()
