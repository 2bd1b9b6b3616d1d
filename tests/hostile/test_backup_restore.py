"""Online backup while another process writes, restore, and the snapshot API."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.cli import main
from memory_core.errors import InvalidInputError
from memory_core.store.backup import check_backup
from tests.fakes import HashingEmbedder

ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent(
    """
    import sys, time
    from memory_core import FixedClock, MemoryService, load_settings
    from tests.fakes import HashingEmbedder
    service = MemoryService.open(sys.argv[1], load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    session = service.start_session(agent_id="assistant", user_id="alice")
    print("writing", flush=True)
    i = 0
    end = time.time() + float(sys.argv[2])
    while time.time() < end:
        result = session.call_tool("memory_write", {"type": "episodic", "content": f"Concurrent event number {i} at the lab."})
        assert result["ok"], result
        i += 1
    print(i, flush=True)
    service.close()
    """
)


def open_service(path):
    return MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())


def test_backup_while_another_process_writes_is_consistent(tmp_path):
    path = tmp_path / "live.sqlite"
    service = open_service(path)
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    service.close()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "6"], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert writer.stdout.readline().strip() == "writing"
    backups = []
    for n in range(4):
        time.sleep(0.5)
        code = main(["backup", str(tmp_path / f"b{n}.sqlite"), "--path", str(path)])
        assert code == 0
        backups.append(tmp_path / f"b{n}.sqlite")
    assert writer.wait(timeout=60) == 0
    written = int(writer.stdout.readline())
    counts = []
    for backup in backups:
        info = check_backup(backup)  # integrity_check ok, schema complete
        conn = sqlite3.connect(backup)
        records, fts, feed = conn.execute(
            "SELECT (SELECT COUNT(*) FROM records), (SELECT COUNT(*) FROM records_fts), "
            "(SELECT value FROM store_meta WHERE key = 'records_version')").fetchone()
        conn.execute("INSERT INTO records_fts(records_fts) VALUES('integrity-check')")
        conn.close()
        assert records == fts == info.records  # one transaction's view: no record without its FTS row
        counts.append(records)
    assert counts == sorted(counts) and 0 < counts[-1] <= written
    # A backup opens as a working store.
    restored = open_service(backups[-1])
    session = restored.start_session(agent_id="assistant", user_id="alice")
    assert session.call_tool("memory_search", {"query": "concurrent event at the lab"})["results"]
    restored.close()


def test_restore_replaces_content_and_other_processes_rebuild_their_index(tmp_path):
    path = tmp_path / "live.sqlite"
    first = open_service(path)
    first.grant("assistant", "user:alice", read=True, write=True, actor="t")
    session = first.start_session(agent_id="assistant", user_id="alice")
    kept = session.call_tool("memory_write", {"type": "semantic", "content": "The user's dog is called Biscuit.", "attribute": "dog_name"})
    snap = first.snapshot(tmp_path / "snap.sqlite")
    assert snap["records"] == 1
    later = session.call_tool("memory_write", {"type": "semantic", "content": "The user plays the cello on Sundays.", "attribute": "hobby"})
    other = open_service(path)  # a second process-like service with its own index
    assert other.index.count() == 2
    with pytest.raises(InvalidInputError):
        first.snapshot(tmp_path / "snap.sqlite")  # never overwritten silently
    first.restore(tmp_path / "snap.sqlite")
    assert first.index.count() == 1
    assert first.lifecycle.get(later["record_id"]) is None and first.record(kept["record_id"]).content.startswith("The user's dog")
    other.index.refresh()  # the change feed's reset reaches the other service
    assert other.index.count() == 1
    results = other.start_session(agent_id="assistant", user_id="alice").call_tool("memory_search", {"query": "cello Sundays"})
    assert all(r["id"] != later["record_id"] for r in results.get("results", []))
    assert first.doctor().ok
    other.close()
    first.close()


def test_restore_refuses_a_file_that_is_not_a_store(tmp_path):
    path = tmp_path / "live.sqlite"
    service = open_service(path)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(InvalidInputError):
        service.restore(junk)
    empty = tmp_path / "empty.sqlite"
    sqlite3.connect(empty).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(InvalidInputError):
        service.restore(empty)
    assert service.doctor().ok
    service.close()
    assert main(["restore", str(junk), "--path", str(path), "--yes"]) == 2
    assert main(["restore", str(empty), "--path", str(path)]) == 2
