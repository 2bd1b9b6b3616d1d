import pytest
from pathlib import Path

MARKER = "Zanzibar-Quokka-7731"


def file_bytes(path: Path) -> bytes:
    data = b""
    for suffix in ("", "-wal", "-shm"):
        candidate = Path(str(path) + suffix)
        if candidate.exists():
            data += candidate.read_bytes()
    return data


@pytest.mark.sqlite_only
def test_forgotten_text_is_not_in_the_database_files(alice, service):
    alice.record_turn("user", "Remember my locker code please.")
    kept = alice.call_tool("memory_write", {"type": "semantic", "content": "The user owns a green bicycle.", "attribute": "bike"})
    # Long content lands in overflow pages, which are freed (not rewritten) when the row shrinks.
    long_note = " ".join(f"{MARKER} detail {i}" for i in range(125))
    first = alice.call_tool("memory_write", {"type": "semantic", "content": f"The user's locker code word is {MARKER} alpha. {long_note}", "attribute": "locker_code", "tags": [MARKER]})
    second = alice.call_tool("memory_write", {"type": "semantic", "content": f"Changed: locker {MARKER} uses beta since Monday, per the gym desk.", "attribute": "locker_code"})
    assert second["superseded"] == [first["record_id"]]
    path = service.store.path
    assert MARKER.encode() in file_bytes(path)

    result = alice.call_tool("memory_forget", {"record_id": second["record_id"], "reason": "user asked to forget it"})
    assert result["ok"] and set(result["forgotten"]) == {first["record_id"], second["record_id"]}

    assert MARKER.encode() not in file_bytes(path)
    lowered = file_bytes(path).lower()
    for token in (b"zanzibar", b"quokka"):  # FTS5 stores lower-cased terms in its index pages
        assert token not in lowered
    # The tombstones stay, without content; the rest of the store is untouched.
    for record_id in result["forgotten"]:
        tomb = service.record(record_id)
        assert tomb.status == "deleted" and tomb.content == "" and tomb.evidence is None and tomb.deleted_at
        assert service.store.scalar("SELECT embedding FROM records WHERE id = ?", (record_id,)) is None
    assert alice.call_tool("memory_get", {"record_id": second["record_id"]})["error"]["code"] == "not_found"
    assert alice.call_tool("memory_get", {"record_id": kept["record_id"]})["ok"]
    assert service.store.scalar("SELECT COUNT(*) FROM records_fts WHERE records_fts MATCH 'quokka'") == 0
    assert service.store.scalar("SELECT COUNT(*) FROM records_fts WHERE records_fts MATCH 'bicycle'") == 1
    assert service.index.count() == 1
    events = [e["kind"] for e in service.events_for(second["record_id"])]
    assert events[-1] == "record.forgotten"


def test_forget_needs_a_reason_and_write_access(service):
    service.grant("reader", "project:atlas", read=True, write=False, actor="t")
    service.grant("writer", "project:atlas", read=True, write=True, actor="t")
    writer = service.start_session(agent_id="writer", user_id="alice", project_id="atlas")
    made = writer.call_tool("memory_write", {"type": "semantic", "content": "Atlas ships in May.", "attribute": "ship_date",
                                             "target": "current_project", "about": "Atlas", "about_kind": "project"})
    reader = service.start_session(agent_id="reader", user_id="alice")
    assert reader.call_tool("memory_get", {"record_id": made["record_id"]})["ok"]
    denied = reader.call_tool("memory_forget", {"record_id": made["record_id"], "reason": "tidy"})
    assert denied["error"]["code"] == "permission_denied"
    assert writer.call_tool("memory_forget", {"record_id": made["record_id"], "reason": " "})["ok"] is False
    assert service.record(made["record_id"]).status == "confirmed" or service.record(made["record_id"]).status == "provisional"
