"""``agent-memory doctor`` finds what is broken; log retention keeps the logs bounded."""

from __future__ import annotations

import json

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.cli import main
from memory_core.store.doctor import run_doctor
from memory_core.extract.worker import run_once
from memory_core.store.retention import prune_logs
from tests.fakes import HashingEmbedder


def _store(tmp_path, clock=None, **settings):
    svc = MemoryService.open(tmp_path / "m.sqlite", load_settings(**settings), clock=clock or FixedClock("2026-03-05T10:00:00Z"),
                             embedder=HashingEmbedder())
    svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
    return svc


def test_a_healthy_store_passes_and_the_cli_exits_zero(tmp_path, capsys):
    service = _store(tmp_path)
    session = service.start_session(agent_id="assistant", user_id="alice")
    made = session.call_tool("memory_write", {"type": "semantic", "content": "The user likes green tea.", "attribute": "tea"})
    session.call_tool("memory_search", {"query": "tea"})
    session.call_tool("memory_forget", {"record_id": made["record_id"], "reason": "asked"})
    report = service.doctor()
    assert report.ok and not [c for c in report.checks if c.status == "fail"], report.text()
    assert report.sizes["search_log rows"] == 1
    service.close()
    assert main(["doctor", "--path", str(tmp_path / "m.sqlite"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True


def test_doctor_reports_each_kind_of_damage_and_the_cli_exits_non_zero(tmp_path, capsys):
    service = _store(tmp_path)
    session = service.start_session(agent_id="assistant", user_id="alice")
    a = session.call_tool("memory_write", {"type": "semantic", "content": "The user likes green tea.", "attribute": "tea"})
    b = session.call_tool("memory_write", {"type": "semantic", "content": "The user owns a red kayak.", "attribute": "boat"})
    conn = service.store.conn
    seq_a = service.store.scalar("SELECT seq FROM records WHERE id = ?", (a["record_id"],))
    with service.store.transaction():
        conn.execute("DELETE FROM records_fts WHERE rowid = ?", (seq_a,))  # a record missing from FTS
        conn.execute("UPDATE records SET status = 'deleted' WHERE id = ?", (b["record_id"],))  # a tombstone holding text
        conn.execute("PRAGMA foreign_keys=OFF")
    conn.execute("PRAGMA foreign_keys=OFF")
    with service.store.transaction():
        conn.execute("INSERT INTO record_entities (record_id, entity_id, role) VALUES ('mem_gone', 'ent_gone', 'mention')")
        conn.execute("UPDATE records SET embedding = NULL WHERE id = ?", (a["record_id"],))
        conn.execute("INSERT INTO index_changes (version, record_seq, op) VALUES (999, 1, 'upsert')")  # feed ahead of records_version
    report = run_doctor(service.store, service.settings)
    failed = {c.name for c in report.checks if c.status == "fail"}
    assert {"fts rows", "forgotten records", "orphan rows", "vectors", "change feed", "foreign keys"} <= failed, report.text()
    assert not report.ok
    service.close()
    assert main(["doctor", "--path", str(tmp_path / "m.sqlite")]) == 1
    assert "PROBLEMS FOUND" in capsys.readouterr().out


def test_retention_prunes_by_age_and_size_and_the_worker_runs_it(tmp_path):
    clock = FixedClock("2026-01-01T10:00:00Z")
    service = _store(tmp_path, clock=clock)
    session = service.start_session(agent_id="assistant", user_id="alice")
    session.call_tool("memory_write", {"type": "semantic", "content": "The user likes green tea.", "attribute": "tea"})
    for i in range(30):
        session.call_tool("memory_search", {"query": f"old question {i} about tea"})
    clock.set("2026-05-01T10:00:00Z")  # 120 days later: the first 30 searches are past the 90-day limit
    for i in range(40):
        session.call_tool("memory_search", {"query": f"new question {i} about tea"})
    writes_before = service.store.scalar("SELECT COUNT(*) FROM write_log")
    report = prune_logs(service.store, service.settings.housekeeping, service.clock.now())
    assert report.deleted["search_log (age)"] == 30
    assert service.store.scalar("SELECT COUNT(*) FROM search_log") == 40
    assert service.store.scalar("SELECT COUNT(*) FROM write_log") == writes_before  # younger than a year
    # Size: keep the newest rows under a limit of roughly ten rows' worth.
    row_bytes = service.store.scalar("SELECT MAX(length(trace) + length(request)) FROM search_log")
    service.settings.housekeeping.search_log_max_mb = row_bytes * 10 / 1_000_000
    report = prune_logs(service.store, service.settings.housekeeping, service.clock.now())
    left = service.store.scalar("SELECT COUNT(*) FROM search_log")
    assert 5 <= left <= 10 and report.deleted["search_log (size)"] == 40 - left
    newest = service.store.scalar("SELECT raw_query FROM search_log ORDER BY seq DESC LIMIT 1")
    assert newest == "new question 39 about tea"
    assert [e for e in service.store.query("SELECT kind FROM events WHERE kind = 'logs.pruned'")]
    # The worker's loop prunes when the interval has passed.
    service.settings.housekeeping.search_log_max_age_days = 1
    clock.advance(days=2)
    run_once(service.extraction, "w1")
    assert service.store.scalar("SELECT COUNT(*) FROM search_log") == 0
    service.close()
