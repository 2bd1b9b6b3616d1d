"""Forget on PostgreSQL, then the erasure pass: not a byte of the forgotten text is left in any file
of the server's data directory (tables, indexes, TOAST, WAL, statistics, logs)."""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest

from memory_core import MemoryService
from memory_core.settings import default_settings
from tests import pg_server
from tests.fakes import HashingEmbedder
from tests.unit.extract.helpers import ended_session


def files_holding(needle: bytes) -> list[str]:
    """Every file of the server's data directory that holds ``needle`` (case-insensitive)."""
    root = Path(pg_server.data_dir())
    hits = []
    for path in root.rglob("*"):
        if path.is_file():
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if needle.lower() in data.lower():
                hits.append(str(path.relative_to(root)))
    return hits


@pytest.fixture
def pg(new_target, clock):
    if pg_server.data_dir() is None:
        pytest.fail("the erasure test reads the server's files: run it on the test run's own server, not MEMORY_TEST_PG_URL")
    settings = default_settings(postgres={"erase_delay_s": 3600})  # the test runs the pass itself
    svc = MemoryService.open(new_target("postgresql"), settings, clock=clock, embedder=HashingEmbedder())
    yield svc
    svc.close()


def _checkpoint(svc):
    with psycopg.connect(svc.store.url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")


def test_forget_then_the_erasure_pass_leaves_no_byte_in_the_data_directory(pg):
    marker = "Zq" + uuid.uuid4().hex[:10]  # unique to this test run
    pg.grant("assistant", "user:alice", read=True, write=True, actor="test")
    session_id, run_id = ended_session(pg, [
        ("user", f"I live in Lisbon now, near the {marker} basilica."),
        ("assistant", "Noted."),
        ("user", "I prefer concise answers about Lisbon trams."),
    ])
    assert pg.run_extraction(run_id).status == "succeeded"
    fact = pg.store.scalar("SELECT id FROM records WHERE content LIKE ? AND source_kind != 'session_summary'", (f"%{marker}%",))
    assert fact
    reader = pg.start_session(agent_id="assistant", user_id="alice")
    assert reader.call_tool("memory_search", {"query": f"where does the user live near {marker}"})["ok"]
    _checkpoint(pg)
    before = files_holding(marker.encode())
    assert any(h.startswith("base/") for h in before), before  # the scan can see it (the test can fail)

    pg.lifecycle.forget(fact, actor="user:alice", reason="user asked")
    report = pg.store.erase_now()
    assert report.done and report.wal_rotated, report.to_dict()
    assert files_holding(marker.encode()) == []
    assert pg.store.get_meta("erase_pending_xid") is None
    # The store still works after the rewrite.
    found = reader.call_tool("memory_search", {"query": "Lisbon trams"})
    assert found["ok"] and found["results"]


def test_a_reader_holding_an_older_snapshot_defers_the_pass_until_it_ends(pg):
    marker = "Zr" + uuid.uuid4().hex[:10]
    pg.grant("assistant", "user:alice", read=True, write=True, actor="test")
    s = pg.start_session(agent_id="assistant", user_id="alice")
    rid = s.call_tool("memory_write", {"type": "semantic", "content": f"The user's locker code word is {marker}."})["record_id"]
    reader = psycopg.connect(pg.store.url)
    reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    assert reader.execute("SELECT count(*) FROM records").fetchone()[0] >= 1  # takes the snapshot
    try:
        pg.lifecycle.forget(rid, actor="user:alice", reason="user asked")
        deferred = pg.store.erase_now()
        assert not deferred.done and "snapshot" in deferred.blocked_by
        # the reader is entitled to what its snapshot shows, until it ends
        assert reader.execute("SELECT count(*) FROM records WHERE content LIKE %s", (f"%{marker}%",)).fetchone()[0] == 1
    finally:
        reader.rollback()
        reader.close()
    report = pg.store.erase_now()
    assert report.done, report.to_dict()
    assert files_holding(marker.encode()) == []


def test_a_forget_starts_the_pass_by_itself(new_target, clock):
    settings = default_settings(postgres={"erase_delay_s": 0})
    svc = MemoryService.open(new_target("postgresql"), settings, clock=clock, embedder=HashingEmbedder())
    try:
        marker = "Zs" + uuid.uuid4().hex[:10]
        svc.grant("assistant", "user:alice", read=True, write=True, actor="test")
        s = svc.start_session(agent_id="assistant", user_id="alice")
        rid = s.call_tool("memory_write", {"type": "semantic", "content": f"The user's alarm word is {marker}."})["record_id"]
        svc.lifecycle.forget(rid, actor="user:alice", reason="user asked")
        svc.store._eraser.join(timeout=60)
        assert svc.store.get_meta("erase_pending_xid") is None
        assert files_holding(marker.encode()) == []
    finally:
        svc.close()
