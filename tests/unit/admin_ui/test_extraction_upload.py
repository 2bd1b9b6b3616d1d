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
