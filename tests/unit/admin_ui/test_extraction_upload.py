import json

import pytest

from admin_ui.data.extraction import parse_transcript
from memory_core.errors import InvalidInputError


def test_json_list_json_object_jsonl_and_text_are_read():
    turns = [{"role": "user", "content": "Hi", "at": "2026-01-01T10:00:00Z"}, {"role": "assistant", "content": "Hello"}]
    assert [t.content for t in parse_transcript(json.dumps(turns).encode())] == ["Hi", "Hello"]
    assert parse_transcript(json.dumps({"turns": turns}).encode())[0].at == "2026-01-01T10:00:00Z"
    jsonl = "\n".join(json.dumps(t) for t in turns).encode()
    assert len(parse_transcript(jsonl, "chat.jsonl")) == 2
    text = parse_transcript(b"User: I live in Porto: the north.\nassistant: ok", "chat.txt")
    assert [(t.role, t.content) for t in text] == [("user", "I live in Porto: the north."), ("assistant", "ok")]


@pytest.mark.parametrize("data", [b"", b"just words", b'[{"role": "narrator", "content": "x"}]', b"[]"])
def test_unreadable_transcripts_are_refused(data):
    with pytest.raises(InvalidInputError):
        parse_transcript(data, "x.txt" if data == b"just words" else "x.json")


def test_pasted_text_keeps_multi_line_turns_and_takes_a_time_in_brackets():
    text = "[2026-03-02 09:15] User: I'm flying to Tokyo\nnext tuesday, back on Friday.\nAssistant: Have a good trip!"
    turns = parse_transcript(text.encode())
    assert [(t.role, t.content, t.at) for t in turns] == [
        ("user", "I'm flying to Tokyo\nnext tuesday, back on Friday.", "2026-03-02T09:15"), ("assistant", "Have a good trip!", None)]
    assert [t.role for t in parse_transcript(b"Human: hi\nAI: hello")] == ["user", "assistant"]


def test_the_time_a_person_gives_is_iso_utc_and_a_day_alone_means_noon():
    from admin_ui.data.extraction import reference_time

    assert reference_time(None) is None and reference_time("  ") is None
    assert reference_time("2026-03-02") == "2026-03-02T12:00:00Z"
    assert reference_time("2026-03-02 08:30") == "2026-03-02T08:30"
    assert reference_time("last week") == "last week"  # left for the core to refuse with its message
