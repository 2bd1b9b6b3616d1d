"""Hook payloads and host transcripts are read and checked before anything touches the store."""

import json

import pytest

from memory_core.errors import InvalidInputError
from memory_core.mcp.hook_payload import (
    MAX_TURN_CHARS, parse_event, parse_payload_text, parse_transcript_lines, read_transcript, turns_from_dicts,
)
from tests.unit.mcp.hook_fixture import FIXTURE_TRANSCRIPT, SESSION_ID


def test_the_fixture_transcript_gives_the_conversation_and_nothing_else():
    read = read_transcript(FIXTURE_TRANSCRIPT)
    assert read.lines == 13 and read.skipped == []
    assert [(t.line, t.role) for t in read.turns] == [(1, "user"), (3, "assistant"), (6, "assistant"), (9, "user"), (11, "assistant")]
    assert read.turns[0].content.startswith("I moved to Porto last month")
    assert read.turns[0].at == "2026-03-05T09:00:00.000000Z"
    assert read.turns[1].content == "Got it: Porto, and Lisbon time for scheduling."  # thinking and tool_use left out
    assert "שרה" in read.turns[3].content  # right-to-left text kept as it is
    assert all("subagent" not in t.content and "Caveat" not in t.content for t in read.turns)


def test_only_complete_lines_are_read_and_a_line_being_written_waits(tmp_path):
    whole = FIXTURE_TRANSCRIPT.read_bytes().split(b"\n")
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(whole[:2]) + b"\n" + whole[2][:40])  # the third line is half written
    read = read_transcript(path)
    assert read.lines == 2 and [t.line for t in read.turns] == [1] and read.skipped == []


def test_two_text_blocks_of_one_assistant_message_become_one_turn():
    lines = [json.dumps({"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "Part one."}]}}),
             json.dumps({"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}]}}),
             json.dumps({"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "Part two."}]}}),
             json.dumps({"type": "assistant", "message": {"id": "m2", "role": "assistant", "content": "Another message."}})]
    read = parse_transcript_lines([line.encode() for line in lines])
    assert [(t.line, t.content) for t in read.turns] == [(0, "Part one.\nPart two."), (3, "Another message.")]


def test_unreadable_lines_are_skipped_and_reported():
    lines = [b"{not json", json.dumps({"type": "user", "message": "not an object"}).encode(),
             b'{"type": "user", "message": {"role": "user", "content": "lone \\ud800 here"}}',
             json.dumps({"type": "user", "message": {"role": "user", "content": "NUL \u0000 here"}}).encode(),
             json.dumps({"type": "user", "message": {"role": "user", "content": "fine"}, "timestamp": "not a time"}).encode(),
             b"\xff\xfe", b"[1, 2]", b"   "]
    read = parse_transcript_lines(lines)
    assert [t.content for t in read.turns] == ["fine"] and read.turns[0].at is None
    assert [s["line"] for s in read.skipped] == [0, 1, 2, 3, 5]


def test_a_very_long_turn_is_cut_with_a_marker():
    text = "x" * (MAX_TURN_CHARS + 50)
    read = parse_transcript_lines([json.dumps({"type": "user", "message": {"role": "user", "content": text}}).encode()])
    assert len(read.turns[0].content) == MAX_TURN_CHARS and read.turns[0].content.endswith("characters]")


def test_a_payload_is_read_with_its_fields():
    event = parse_payload_text("SessionEnd", json.dumps({"session_id": SESSION_ID, "transcript_path": "/tmp/t.jsonl",
                                                         "hook_event_name": "SessionEnd", "reason": "logout", "extra": [1]}))
    assert (event.host_session_id, event.transcript_path, event.label) == (SESSION_ID, "/tmp/t.jsonl", "SessionEnd:logout")


@pytest.mark.parametrize("event, payload", [
    ("Notification", {"session_id": "s"}),                       # an event we do not handle
    ("Stop", []),                                                # not an object
    ("Stop", {"hook_event_name": "Stop"}),                       # no session id
    ("Stop", {"session_id": "../../etc"}),                       # not an id
    ("Stop", {"session_id": ""}),
    ("Stop", {"session_id": 7}),
    ("Stop", {"session_id": "s", "hook_event_name": "SessionEnd"}),  # configured for another event
    ("UserPromptSubmit", {"session_id": "s", "prompt": ["not", "text"]}),
    ("UserPromptSubmit", {"session_id": "s", "prompt": "lone \ud800"}),
    ("Stop", {"session_id": "s", "transcript_path": "a\x00b"}),
    ("SessionEnd", {"session_id": "s", "reason": "x" * 65}),
])
def test_malformed_payloads_are_refused(event, payload):
    with pytest.raises(InvalidInputError):
        parse_event(event, payload)


@pytest.mark.parametrize("raw", [b"", b"not json", b"\xff\xfe{}", b"[" * 100_000, b'{"session_id": "s"'])
def test_payload_text_that_is_not_a_json_object_is_refused(raw):
    with pytest.raises(InvalidInputError):
        parse_payload_text("Stop", raw)


def test_a_missing_transcript_is_refused(tmp_path):
    with pytest.raises(InvalidInputError):
        read_transcript(tmp_path / "nope.jsonl")


@pytest.mark.parametrize("turns", [
    "not a list", [{"line": 0, "role": "user"}], [{"line": 0, "role": "system", "content": "x", "at": None}],
    [{"line": 1, "role": "user", "content": "a", "at": None}, {"line": 1, "role": "user", "content": "b", "at": None}],
    [{"line": -1, "role": "user", "content": "a", "at": None}], [{"line": True, "role": "user", "content": "a", "at": None}],
    [{"line": 0, "role": "user", "content": "a", "at": "yesterday-ish"}],
    [{"line": 0, "role": "user", "content": "a", "at": None, "user_id": "bob"}],
])
def test_remote_turns_are_checked(turns):
    with pytest.raises(InvalidInputError):
        turns_from_dicts(turns)
