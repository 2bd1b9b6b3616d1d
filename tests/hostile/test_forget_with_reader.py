"""Defect 4: a reader inside a read transaction (another process) neither blocks a forget nor
keeps the forgotten text on disk once it lets go."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

from memory_core import FixedClock, MemoryService, load_settings
from tests.fakes import HashingEmbedder

MARKER = "Quixotic-Marmoset-4411"

READER = textwrap.dedent(
    """
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN")
    rows = conn.execute("SELECT content FROM records").fetchall()  # holds a read snapshot from here on
    print("reading", len(rows), flush=True)
    sys.stdin.readline()
    conn.execute("COMMIT")
    print("done", flush=True)
    sys.stdin.readline()  # keep the connection open (but idle) until told to exit
    conn.close()
    """
)


def file_bytes(path: Path) -> bytes:
    return b"".join(Path(str(path) + s).read_bytes() for s in ("", "-wal", "-shm") if Path(str(path) + s).exists())


def _wait_for(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_forget_with_a_reader_in_another_process(tmp_path):
    path = tmp_path / "memory.sqlite"
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    session = service.start_session(agent_id="assistant", user_id="alice")
    session.record_turn("user", f"My gate code word is {MARKER}, keep it.")
    long_note = " ".join(f"{MARKER} detail {i}" for i in range(100))  # spills into overflow pages
    made = session.call_tool("memory_write", {"type": "semantic", "attribute": "gate_code", "source_kind": "user_statement",
                                              "content": f"The user's gate code word is {MARKER}. {long_note}",
                                              "evidence": f"My gate code word is {MARKER}"})
    assert made["ok"], made
    service.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the text is in the main file now
    assert MARKER.encode() in file_bytes(path)

    reader = subprocess.Popen([sys.executable, "-c", READER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().startswith("reading")
        # The reader holds its snapshot until told to let go, which happens only after the forget
        # has returned: the forget cannot have waited for the reader (the regression was a TRUNCATE
        # checkpoint waiting on it). No clock is read; the order of events is the check.
        result = session.call_tool("memory_forget", {"record_id": made["record_id"], "reason": "user asked"})
        assert result["ok"], result
        assert reader.poll() is None  # still holding the snapshot when the forget came back
        # The reader's snapshot still needs the old pages, so the erasure was left to run after it...
        assert service.store.erase_pending
        reader.stdin.write("\n")
        reader.stdin.flush()
        assert reader.stdout.readline().startswith("done")
        # ...and completes on its own shortly after the reader's transaction ends.
        assert _wait_for(lambda: not service.store.erase_pending, 10.0)
        data = file_bytes(path)
        assert MARKER.encode() not in data
        for token in (b"quixotic", b"marmoset"):
            assert token not in data.lower()
    finally:
        reader.stdin.write("\n")
        reader.stdin.flush()
        reader.wait(timeout=10)
    assert session.call_tool("memory_write", {"type": "episodic", "content": "The user walked the dog."})["ok"]
    service.close()
