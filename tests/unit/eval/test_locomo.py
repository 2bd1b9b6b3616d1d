import json
from datetime import datetime, timezone

import pytest

from memory_core.eval.locomo import (
    load_locomo,
    normalise_evidence,
    off_topic_partner,
    parse_conversation,
    parse_session_date,
)


def sample(sample_id="conv-x", speakers=("Ann", "Ben"), questions=None):
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": speakers[0], "speaker_b": speakers[1],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": speakers[0], "dia_id": "D1:1", "text": "I adopted a cat."},
                {"speaker": speakers[1], "dia_id": "D1:2", "text": "Look!", "blip_caption": "a photo of a cat"},
            ],
            "session_2_date_time": "9:00 am on 25 May, 2023",
            "session_2": [{"speaker": speakers[0], "dia_id": "D2:1", "text": "The cat is called Tom."}],
            "session_3_date_time": "9:00 am on 1 June, 2023",
        },
        "qa": questions if questions is not None else [
            {"question": "What pet?", "answer": "a cat", "evidence": ["D1:1"], "category": 4},
            {"question": "Name?", "answer": "Tom", "evidence": ["D2:1; D1:2"], "category": 1},
            {"question": "Trick?", "adversarial_answer": "x", "evidence": ["D1:1"], "category": 5},
            {"question": "Broken?", "answer": 3, "evidence": ["D:2:01", "D9:9", "D"], "category": 2},
        ],
    }


def test_session_dates_parse_to_utc():
    assert parse_session_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


def test_evidence_is_split_repaired_and_checked():
    ids, dropped = normalise_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D"], {"D8:6", "D9:17", "D11:26", "D30:5"})
    assert ids == ["D8:6", "D9:17", "D11:26", "D30:5"]
    assert dropped == ["D"]


def test_conversation_turns_sessions_and_questions():
    conv = parse_conversation(sample())
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D2:1"]
    assert conv.turns[1].content() == "Ben: Look! [shared an image: a photo of a cat]"
    assert conv.turns[2].at.day == 25
    assert sorted(conv.sessions) == [1, 2]
    q = conv.questions
    assert q[1].evidence == ("D2:1", "D1:2")
    assert q[3].evidence == ("D2:1",) and q[3].answer == "3"
    assert [x.answerable for x in q] == [True, True, False, True]
    assert conv.dropped_evidence == ["D9:9", "D"]


def test_off_topic_partner_skips_conversations_sharing_a_speaker():
    convs = [parse_conversation(sample("a", ("Ann", "John"))), parse_conversation(sample("b", ("John", "Eve"))),
             parse_conversation(sample("c", ("Max", "Liz")))]
    assert off_topic_partner(convs, 0).sample_id == "c"
    assert off_topic_partner(convs, 2).sample_id == "a"


def test_load_reads_a_file_and_explains_a_missing_one(tmp_path, monkeypatch):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample("a"), sample("b")]))
    assert [c.sample_id for c in load_locomo(path)] == ["a", "b"]
    monkeypatch.setenv("MEMORY_LOCOMO_PATH", str(path))
    assert len(load_locomo(limit=1)) == 1
    with pytest.raises(FileNotFoundError, match="MEMORY_LOCOMO_PATH"):
        load_locomo(tmp_path / "missing.json")
