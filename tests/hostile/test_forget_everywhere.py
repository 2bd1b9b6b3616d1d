"""Defect 5: forgetting erases the memory from every place the store keeps it."""

from __future__ import annotations

from pathlib import Path

from tests.unit.extract.helpers import ended_session


def file_bytes(path: Path) -> bytes:
    return b"".join(Path(str(path) + s).read_bytes() for s in ("", "-wal", "-shm") if Path(str(path) + s).exists())


def on_disk(service) -> bytes | None:
    """The SQLite files' bytes, lower-cased; None on PostgreSQL (its files are checked after the
    erasure pass in tests/contract/test_pg_erasure.py)."""
    return file_bytes(service.store.path).lower() if service.store.backend == "sqlite" else None


def test_forget_erases_transcript_summary_candidates_logs_and_entities(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    session_id, run_id = ended_session(service, [
        ("user", "I live in Lisbon now, near the Estrela basilica."),
        ("assistant", "Noted."),
        ("user", "I prefer concise answers about Lisbon trams."),
    ])
    detail = service.run_extraction(run_id)
    assert detail.status == "succeeded"
    fact = service.store.scalar("SELECT id FROM records WHERE content LIKE '%Estrela%' AND source_kind != 'session_summary'")
    summary = service.store.scalar("SELECT id FROM records WHERE source_kind = 'session_summary'")
    trams = service.store.scalar("SELECT id FROM records WHERE content LIKE '%trams%' AND source_kind != 'session_summary'")
    assert fact and summary and trams
    # A user's own search that returned the summary, before the forget.
    reader = service.start_session(agent_id="assistant", user_id="alice")
    assert reader.call_tool("memory_search", {"query": "where does the user live"})["ok"]
    assert on_disk(service) is None or b"estrela" in on_disk(service)

    preview = service.forget_preview(fact)
    assert {r["id"] for r in preview["records"]} == {fact, summary}
    assert preview["transcript_turns"] == [{"session_id": session_id, "turn": 0, "spans": 1}]
    assert [e["name"] for e in preview["entities_removed"]] == ["Estrela"]  # Lisbon is linked to the trams record too
    assert preview["extraction_candidates"] and preview["search_log_rows"] and preview["write_log_rows"]
    assert any("transcript" in line for line in preview["lines"])
    assert "Estrela" not in repr({k: v for k, v in preview.items() if k not in ("entities_removed", "lines")})

    forgotten = service.lifecycle.forget(fact, actor="user:alice", reason="user asked")
    assert set(forgotten) == {fact, summary}

    turns = service.transcript(session_id)
    assert turns[0]["content"] == "[forgotten]"
    assert turns[2]["content"] == "I prefer concise answers about Lisbon trams."  # other turns untouched
    for record_id in (fact, summary):
        tomb = service.record(record_id)
        assert tomb.status == "deleted" and tomb.content == "" and tomb.attribute is None and tomb.subject is None
        assert tomb.evidence is None and tomb.entity_links == []
    assert service.record(trams).status in ("confirmed", "provisional")
    assert service.store.scalar("SELECT COUNT(*) FROM entities WHERE canonical_name = 'Estrela'") == 0
    assert service.store.scalar("SELECT COUNT(*) FROM entity_aliases WHERE alias = 'Estrela'") == 0
    assert service.store.scalar("SELECT COUNT(*) FROM entities WHERE canonical_name = 'Lisbon'") == 1
    # Not a byte of it anywhere: records, FTS pages, turns, candidates, logs, entity names, WAL.
    assert on_disk(service) is None or b"estrela" not in on_disk(service)
    if service.store.backend == "sqlite":
        assert service.store.scalar("PRAGMA integrity_check") == "ok"
    # (This search's own query is logged, so it runs after the byte check.)
    found = reader.call_tool("memory_search", {"query": "Estrela basilica where does the user live"})
    assert all(r["id"] not in (fact, summary) for r in found.get("results", []))


def test_forget_erases_attribute_and_subject_of_every_version(alice, service):
    first = alice.call_tool("memory_write", {"type": "semantic", "content": "The user's safe combination is 4-4-1.", "attribute": "safe_combination_zq"})
    second = alice.call_tool("memory_write", {"type": "semantic", "content": "The user's safe combination is 9-9-2.", "attribute": "safe_combination_zq"})
    assert second["superseded"] == [first["record_id"]]
    alice.call_tool("memory_revise", {"action": "confirm", "record_id": second["record_id"], "reason": "the safe combination 9-9-2 was repeated"})
    done = alice.call_tool("memory_forget", {"record_id": second["record_id"], "reason": "user asked"})
    assert set(done["forgotten"]) == {first["record_id"], second["record_id"]}
    data = file_bytes(service.store.path).lower()
    assert b"combination_zq" not in data and b"9-9-2" not in data and b"4-4-1" not in data
    kinds = [e["kind"] for e in service.events_for(second["record_id"])]
    assert kinds[-1] == "record.forgotten" and "record.superseded" in [e["kind"] for e in service.events_for(first["record_id"])]


def test_event_log_stays_append_only_except_for_redaction(service):
    import sqlite3

    import pytest

    with service.store.transaction() as conn:
        service.store.append_event(conn, at="2026-03-05T10:00:00.000000Z", kind="test", actor="t", reason="secret words")
    with pytest.raises(sqlite3.IntegrityError):
        with service.store.transaction() as conn:
            conn.execute("UPDATE events SET reason = 'something else' WHERE kind = 'test'")
    with pytest.raises(sqlite3.IntegrityError):
        with service.store.transaction() as conn:
            conn.execute("UPDATE events SET reason = '[forgotten]', actor = 'x' WHERE kind = 'test'")
    with service.store.transaction() as conn:
        conn.execute("UPDATE events SET reason = '[forgotten]' WHERE kind = 'test'")
    assert service.store.scalar("SELECT reason FROM events WHERE kind = 'test'") == "[forgotten]"


def test_a_forgotten_summary_does_not_take_other_turns_with_it(service):
    from memory_core.ingest.write_types import WriteRequest
    from memory_core.policy.scopes import Scope

    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    session_id, run_id = ended_session(service, [
        ("user", "Please help me plan the garden beds this spring."),
        ("assistant", "Happy to help."),
        ("user", "I live in Lisbon now, near the Estrela basilica."),
    ])
    assert service.run_extraction(run_id).status == "succeeded"
    fact = service.store.scalar("SELECT id FROM records WHERE content LIKE '%Estrela%' AND source_kind != 'session_summary'")
    # A summary (as an extractor may write one) that quotes the first turn and repeats the fact.
    opener = "Please help me plan the garden beds this spring."
    summary = service.write(WriteRequest(
        type="episodic", scope=Scope("user", "alice"), source_kind="session_summary", agent_id="assistant", user_id="alice",
        actor="test", content=f"The user opened with: \u201c{opener}\u201d and said: I live in Lisbon now, near the Estrela basilica.",
        evidence=opener, session_id=session_id, source_ref=session_id, evidence_verified=True, evidence_turn=0, dedupe=False,
    ), service.access("assistant", "alice")).record.id
    assert summary in service.lifecycle.forget(fact, actor="t", reason="asked")
    turns = service.transcript(session_id)
    assert turns[0]["content"] == opener  # the summary's own quote is another turn: not part of the memory
    assert "Estrela" not in turns[2]["content"] and "[forgotten]" in turns[2]["content"]


def test_migration_61_empties_tombstones_left_by_older_forgets(tmp_path):
    import sqlite3

    from memory_core.store.db import Store
    from memory_core.store.migrations import MIGRATIONS

    path = tmp_path / "old.sqlite"
    store = Store.open(path, "2026-03-05T10:00:00.000000Z")
    store.close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("INSERT INTO entities (id, kind, canonical_name, scope_kind, scope_id, created_at, created_by) "
                 "VALUES ('ent_1', 'person', 'Dr Varga', 'user', 'alice', 'x', 't')")
    conn.execute("INSERT INTO records (id, type, lineage_id, content, subject_entity_id, attribute, subject, scope_kind, scope_id, "
                 "source_kind, created_at, updated_at, confidence, status) VALUES ('mem_1', 'semantic', 'mem_1', '', 'ent_1', "
                 "'therapist_name', 'ent_1:therapist_name', 'user', 'alice', 'agent_inference', 'x', 'x', 0.5, 'deleted')")
    conn.execute("INSERT INTO record_entities VALUES ('mem_1', 'ent_1', 'subject')")
    conn.execute("DELETE FROM schema_migrations WHERE number = 61")  # as if written before migration 61
    conn.close()
    store = Store.open(path, "2026-03-05T10:00:00.000000Z")
    row = store.query_one("SELECT attribute, subject, subject_entity_id FROM records WHERE id = 'mem_1'")
    assert tuple(row) == (None, None, None)
    assert store.scalar("SELECT COUNT(*) FROM record_entities") == 0
    assert 61 in MIGRATIONS and store.scalar("SELECT COUNT(*) FROM schema_migrations WHERE number = 61") == 1
    store.close()
