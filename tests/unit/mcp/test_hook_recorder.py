"""A recorded Claude Code hook sequence becomes a memory session with the conversation's turns, and
its end runs extraction over them; a refused event writes nothing; users never share a session."""

import pytest

from memory_core.errors import InvalidInputError
from memory_core.mcp.hook_payload import parse_event, read_transcript
from memory_core.mcp.hook_recorder import HookRecorder
from memory_core.mcp.memory_session import Principal
from tests.unit.mcp.hook_fixture import SESSION_ID, fixture_events, replay

ALICE = Principal("assistant", "alice")


def _counts(service) -> dict[str, int]:
    return {t: service.store.scalar(f"SELECT COUNT(*) FROM {t}") for t in
            ("sessions", "turns", "host_sessions", "events", "extraction_runs", "records")}


def _hook(service, principal=ALICE, **options):
    recorder = HookRecorder(service, principal, **options)

    def call(event, payload):
        checked = parse_event(event, payload)
        read = read_transcript(checked.transcript_path) if checked.transcript_path else None
        return recorder.record(checked, read.turns if read else [], read.lines if read else None)
    return call


def test_the_recorded_sequence_becomes_a_session_with_its_turns_and_an_extraction_run(service, alice, tmp_path):
    results = replay(fixture_events(), tmp_path / "t.jsonl", _hook(service))
    session_id = results[0]["session_id"]
    assert {r["session_id"] for r in results} == {session_id}
    assert [r["appended"] for r in results] == [0, 0, 3, 0, 2, 0]
    assert results[-1]["ended"] and results[-1]["extraction_run_id"]
    transcript = service.transcript(session_id)
    assert [(t["role"], t["content"][:24]) for t in transcript] == [
        ("user", "I moved to Porto last mo"), ("assistant", "Got it: Porto, and Lisbo"),
        ("assistant", "Nothing was stored about"), ("user", "I prefer short answers. "), ("assistant", "Short answers it is.")]
    assert transcript[0]["at"] == "2026-03-05T09:00:00.000000Z"
    row = service.store.query_one("SELECT * FROM host_sessions WHERE session_id = ?", (session_id,))
    assert (row["host"], row["host_session_id"], row["transcript_lines"]) == ("claude-code", SESSION_ID, 13)
    assert row["last_event"] == "SessionEnd:prompt_input_exit" and row["ended_at"] is not None
    info = service.store.query_one("SELECT framework, ended_at FROM sessions WHERE id = ?", (session_id,))
    assert info["framework"] == "claude-code" and info["ended_at"] is not None

    detail = service.run_extraction(results[-1]["extraction_run_id"])
    assert detail.status == "succeeded"
    facts = service.store.query("SELECT content, status, source_kind, evidence FROM records WHERE source_kind != 'session_summary'")
    assert facts, "nothing was extracted from the host's conversation"
    assert all(f["source_kind"] == "user_statement" and f["status"] == "confirmed" for f in facts)
    assert any("Porto" in f["content"] for f in facts)


def test_replaying_an_event_appends_nothing_twice(service, alice, tmp_path):
    events = fixture_events()
    hook = _hook(service)
    replay(events[:3], tmp_path / "t.jsonl", hook)
    again = replay(events[2:3], tmp_path / "t.jsonl", hook)  # the same Stop delivered twice
    assert again[0]["appended"] == 0
    assert service.store.scalar("SELECT COUNT(*) FROM turns") == 3


def test_a_session_resumed_after_it_ended_continues_in_a_new_memory_session(service, alice, tmp_path):
    events = fixture_events()
    hook = _hook(service)
    first = replay(events[:3] + [{**events[5], "transcript_lines": 7}], tmp_path / "t.jsonl", hook)  # ends after one exchange
    resumed = replay([{**events[0], "transcript_lines": 7, "payload": {**events[0]["payload"], "source": "resume"}},
                      *events[3:]], tmp_path / "t.jsonl", hook)
    assert resumed[0]["opened"] and resumed[0]["session_id"] != first[0]["session_id"]
    assert [t["content"][:20] for t in service.transcript(resumed[0]["session_id"])] == ["I prefer short answe", "Short answers it is."]
    late = hook("SessionEnd", {**events[5]["payload"], "transcript_path": None})
    assert late["note"] == "the host session had already ended" and late["extraction_run_id"] is None


def test_two_users_with_the_same_host_session_id_never_share_a_session(service, alice, tmp_path):
    service.grant("assistant", "user:bob", read=True, write=True, actor="test")
    a = replay(fixture_events()[:3], tmp_path / "a.jsonl", _hook(service))
    b = replay(fixture_events()[:3], tmp_path / "b.jsonl", _hook(service, Principal("assistant", "bob")))
    assert a[0]["session_id"] != b[0]["session_id"]
    owners = {r["session_id"]: r["user_id"] for r in service.store.query("SELECT session_id, user_id FROM host_sessions")}
    assert owners == {a[0]["session_id"]: "alice", b[0]["session_id"]: "bob"}


def test_a_turn_that_cannot_be_stored_rolls_the_whole_event_back(service, alice, tmp_path):
    hook = _hook(service)
    replay(fixture_events()[:1], tmp_path / "t.jsonl", hook)
    before = _counts(service)
    recorder = HookRecorder(service, ALICE)
    from memory_core.mcp.hook_payload import TranscriptTurn

    turns = [TranscriptTurn(0, "user", "fine"), TranscriptTurn(1, "user", "bad time", at="not a time")]
    with pytest.raises(InvalidInputError):
        recorder.record(parse_event("Stop", {"session_id": SESSION_ID}), turns, 2)
    assert _counts(service) == before
    assert service.store.scalar("SELECT transcript_lines FROM host_sessions") == 0


def test_session_start_can_add_the_ambient_profile_and_records_it(service, alice, tmp_path):
    from tests.unit.ambient.helpers import said

    said(service.start_session(agent_id="assistant", user_id="alice"), "I prefer concise answers.",
         "The user prefers concise answers.", "answer_style")
    result = replay(fixture_events()[:1], tmp_path / "t.jsonl", _hook(service, context=True))[0]
    assert "concise answers" in result["additional_context"]
    recorded = service.session_context(result["session_id"])
    assert recorded["framework"] == "claude-code" and recorded["system_text"] == result["additional_context"]
    plain = replay(fixture_events()[:1], tmp_path / "u.jsonl", _hook(service, Principal("assistant", "alice"), host="other-host"))[0]
    assert "additional_context" not in plain
