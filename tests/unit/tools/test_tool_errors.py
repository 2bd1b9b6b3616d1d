import json

import pytest

from memory_core import MemoryService

COUNTED = ("records", "events", "entities", "records_fts", "index_changes", "procedures")
WRITE_TOOLS = ("memory_write", "memory_revise", "memory_forget")


def snapshot(service):
    return {table: service.store.scalar(f"SELECT COUNT(*) FROM {table}") for table in COUNTED}


def refusals(service):
    return [dict(r) for r in service.store.query("SELECT * FROM write_log WHERE outcome = 'refused' ORDER BY seq")]


BAD_CALLS = [
    ("memory_write", "{not json", "invalid_input"),
    ("memory_write", "[1, 2]", "invalid_input"),
    ("memory_teleport", {}, "unknown_tool"),
    (None, {}, "unknown_tool"),
    ("memory_write", {"type": "semantic"}, "invalid_input"),
    ("memory_write", {"type": "semantic", "content": 12}, "invalid_input"),
    ("memory_write", {"type": "semantic", "content": "x", "tags": "notalist"}, "invalid_input"),
    ("memory_write", {"type": "semantic", "content": "x", "surprise": True}, "invalid_input"),
    ("memory_write", {"type": "semantic", "content": "x" * 5000, "attribute": "a"}, "invalid_input"),
    ("memory_write", {"type": "semantic", "content": "ok", "target": "user:bob"}, "invalid_input"),
    ("memory_write", {"type": "semantic", "content": "ok", "target": "team"}, "invalid_input"),
    ("memory_write", {"type": "semantic", "content": "ok", "event_at": "next blue moon"}, "invalid_input"),
    ("memory_write", {"type": "procedural", "content": "Step one."}, "invalid_input"),
    ("memory_get", {"record_id": "mem_doesnotexist"}, "not_found"),
    ("memory_get", {}, "invalid_input"),
    ("memory_forget", {"record_id": "mem_doesnotexist", "reason": "x"}, "not_found"),
    ("memory_forget", {"record_id": "mem_x"}, "invalid_input"),
    ("memory_revise", {"action": "update", "record_id": "mem_nope", "content": "x", "reason": "r"}, "not_found"),
    ("memory_revise", {"action": "explode", "reason": "r"}, "invalid_input"),
    ("memory_revise", {"action": "merge_entities", "reason": "r"}, "invalid_input"),
]


@pytest.mark.parametrize("name,arguments,code", BAD_CALLS)
def test_bad_calls_return_structured_errors_and_write_nothing(alice, service, name, arguments, code):
    before = snapshot(service)
    result = alice.call_tool(name, arguments)
    assert result["ok"] is False
    assert result["error"]["code"] == code
    assert result["error"]["message"]
    json.dumps(result)  # a model can read it
    assert snapshot(service) == before
    # Issue 11: a refused write attempt is not silent; it leaves exactly one write-log row with its reason.
    logged = refusals(service)
    assert service.store.scalar("SELECT COUNT(*) FROM write_log WHERE outcome != 'refused'") == 0
    if name in WRITE_TOOLS:
        assert len(logged) == 1 and logged[0]["operation"] == name
        assert json.loads(logged[0]["validation"])["refused"]["code"] == code
    else:
        assert logged == []


def test_write_without_grant_is_refused_and_writes_nothing(service):
    session = service.start_session(agent_id="stranger", user_id="alice")
    before = snapshot(service)
    result = session.call_tool("memory_write", {"type": "semantic", "content": "The user likes tea.", "attribute": "drink"})
    assert result["error"]["code"] == "permission_denied"
    assert snapshot(service) == before
    (row,) = refusals(service)
    refused = json.loads(row["validation"])["refused"]
    assert refused["stage"] == "permission_check" and refused["code"] == "permission_denied" and refused["message"]
    assert row["agent_id"] == "stranger" and json.loads(row["candidate"])["content"] == "The user likes tea."


def test_ids_with_slashes_are_rejected(service):
    from memory_core.errors import InvalidInputError

    for agent, user in (("a/b", "alice"), ("bot", "alice/x"), ("bot", ""), ("bot", "has space")):
        with pytest.raises(InvalidInputError):
            service.start_session(agent_id=agent, user_id=user)
    with pytest.raises(InvalidInputError):
        service.grant("a/b", "user:alice", actor="t")


def test_failure_inside_the_transaction_rolls_everything_back(alice, service, monkeypatch):
    from memory_core.ingest import write_stages as writer

    def explode(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(writer, "fts_sync_new", explode)  # after the record, its links and their queued rows
    before = snapshot(service)
    result = alice.call_tool("memory_write", {"type": "semantic", "content": "The user likes tea.", "attribute": "drink"})
    assert result == {"ok": False, "error": {"code": "internal_error", "message": "internal error: RuntimeError"}}
    assert snapshot(service) == before


def test_tool_schemas_are_plain_json_schema(alice, service):
    schemas = {tool["name"]: tool for tool in service.tool_schemas()}
    assert {"memory_write", "memory_get", "memory_revise", "memory_forget"} <= set(schemas)
    write = schemas["memory_write"]["input_schema"]
    assert write["type"] == "object" and "content" in write["required"]
    assert write["additionalProperties"] is False
    per_session = {t["name"]: t for t in alice.tool_schemas()}
    assert per_session["memory_write"]["input_schema"]["properties"]["target"]["enum"] == ["personal"]
    json.dumps(schemas)


def test_closed_session_refuses_tool_calls(alice):
    alice.end()
    result = alice.call_tool("memory_get", {"record_id": "mem_x"})
    assert result["error"]["code"] == "session_closed"


def test_host_events_drive_a_session(service):
    service.grant("bot", "user:carol", read=True, write=True, actor="t")
    started = service.handle_event({"type": "session_started", "agent_id": "bot", "user_id": "carol", "session_id": "s1"})
    assert started == {"ok": True, "session_id": "s1"}
    assert service.handle_event({"type": "turn_completed", "session_id": "s1", "role": "user", "content": "hi"})["turn"] == 0
    ended = service.handle_event({"type": "session_ended", "session_id": "s1"})
    assert ended["extraction_run_id"].startswith("run_")
    assert service.store.scalar("SELECT status FROM extraction_runs") == "queued"


def test_embedder_mismatch_is_refused(tmp_path, clock, settings):
    from memory_core.errors import EmbedderMismatchError
    from tests.fakes import HashingEmbedder

    MemoryService.open(tmp_path / "m.sqlite", settings, clock=clock, embedder=HashingEmbedder()).close()
    other = HashingEmbedder()
    other.model_version = "2"
    with pytest.raises(EmbedderMismatchError) as info:
        MemoryService.open(tmp_path / "m.sqlite", settings, clock=clock, embedder=other)
    assert "reembed" in info.value.message
