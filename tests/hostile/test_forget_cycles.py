"""Defect 1: thousands of write+forget cycles keep the store working, and erase the text."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from memory_core import FixedClock, MemoryService, load_settings
from tests.fakes import HashingEmbedder

CYCLES = int(os.environ.get("MEMORY_TEST_FORGET_CYCLES", "5000"))


def file_bytes(path: Path) -> bytes:
    return b"".join(Path(str(path) + s).read_bytes() for s in ("", "-wal", "-shm") if Path(str(path) + s).exists())


def _varint(b: bytes, i: int) -> tuple[int, int]:
    v = 0
    for k in range(9):
        byte = b[i]
        i += 1
        if k == 8:
            return (v << 8) | byte, i
        v = (v << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return v, i
    return v, i


def fts_levels(service) -> int:
    """Levels in the FTS5 index structure record (a diagnostic of SQLite's private format)."""
    block = service.store.scalar("SELECT block FROM records_fts_data WHERE id = 10")
    return _varint(block, 4)[0]


@pytest.fixture
def fast_dir(tmp_path):
    """A directory in RAM when there is one: each forget fsyncs a checkpoint, and 5,000 fsyncs on
    a shared disk take minutes without testing anything more."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        path = Path(tempfile.mkdtemp(prefix="forget-cycles-", dir=shm))
        yield path
        shutil.rmtree(path, ignore_errors=True)
    else:
        yield tmp_path


def test_thousands_of_write_forget_cycles_keep_the_store_working(fast_dir):
    path = fast_dir / "cycles.sqlite"
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    session = service.start_session(agent_id="assistant", user_id="alice")
    for i in range(50):  # a store with some content, so FTS segments span pages
        assert session.call_tool("memory_write", {"type": "episodic", "content": f"Keeper note {i} about the garden shed and tomatoes."})["ok"]
    max_levels = 0
    for cycle in range(CYCLES):
        marker = f"Xq{cycle:05d}zebrafinch"
        made = session.call_tool("memory_write", {"type": "episodic", "content": f"The code word {marker} opens the shed."})
        assert made["ok"], (cycle, made)
        gone = session.call_tool("memory_forget", {"record_id": made["record_id"], "reason": "cycle"})
        assert gone["ok"], (cycle, gone)
        if cycle % 50 == 0:
            max_levels = max(max_levels, fts_levels(service))
    # Still working: writes, searches, FTS integrity.
    assert session.call_tool("memory_write", {"type": "episodic", "content": "The user planted basil."})["ok"]
    found = session.call_tool("memory_search", {"query": "garden shed tomatoes"})
    assert found["ok"] and found["results"], found
    service.store.conn.execute("INSERT INTO records_fts(records_fts) VALUES('integrity-check')")
    assert service.store.scalar("PRAGMA integrity_check") == "ok"
    assert max_levels < 400, max_levels  # bounded by the periodic rebuild (SQLite breaks near 2,000)
    service.close()
    reopened = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    assert reopened.start_session(agent_id="assistant", user_id="alice").call_tool("memory_search", {"query": "basil"})["ok"]
    reopened.close()
    data = file_bytes(path).lower()
    assert b"zebrafinch" not in data
