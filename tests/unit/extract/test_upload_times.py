"""An uploaded or pasted transcript's relative dates resolve against a stated time: the turns' own
times, else the time the person gives, else now; and the service says which it used."""

import pytest

from memory_core.errors import InvalidInputError

TOKYO = "I'm flying to Tokyo next tuesday"


def tokyo_record(service):
    rows = service.store.query("SELECT content, review_at, source_kind, status FROM records WHERE content LIKE '%Tokyo%'")
    assert len(rows) == 1, rows
    return rows[0]


@pytest.fixture
def granted(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    return service


def test_a_given_time_dates_turns_that_have_none(granted):
    # the clock says Thursday 5 March 2026; the conversation happened on Wednesday 25 February
    detail = granted.extract_transcript(agent_id="assistant", user_id="alice", turns=[{"role": "user", "content": TOKYO}],
                                        reference_time="2026-02-25T09:00:00Z")
    assert detail.status == "succeeded"
    assert [t["at"] for t in granted.transcript(detail.run["session_id"])] == ["2026-02-25T09:00:00.000000Z"]
    row = tokyo_record(granted)
    assert row["review_at"] == "2026-03-04T00:00:00.000000Z" and "(2026-03-03)" in row["content"]
    basis = granted.transcript_time_basis([{"role": "user", "content": TOKYO}], "2026-02-25T09:00:00Z")
    assert basis == "Relative dates resolve against the time you gave, 2026-02-25T09:00:00.000000Z."


def test_a_turns_own_time_wins_over_the_given_one(granted):
    turns = [{"role": "user", "content": TOKYO, "at": "2026-03-05T09:00:00Z"}, {"role": "assistant", "content": "Safe trip!"}]
    detail = granted.extract_transcript(agent_id="assistant", user_id="alice", turns=turns, reference_time="2026-02-25T09:00:00Z")
    assert [t["at"][:10] for t in granted.transcript(detail.run["session_id"])] == ["2026-03-05", "2026-02-25"]
    assert tokyo_record(granted)["review_at"] == "2026-03-11T00:00:00.000000Z"  # Tuesday 10 March, from the turn's Thursday
    assert granted.transcript_time_basis(turns, "2026-02-25T09:00:00Z") == (
        "Relative dates resolve against the turns' own times (1 of 2 turns); the time you gave, "
        "2026-02-25T09:00:00.000000Z (1 turns without a time).")
    assert granted.transcript_time_basis(turns[:1]) == "Relative dates resolve against the turns' own times."
    assert "the upload time, 2026-03-05T10:00:00.000000Z (no turn has a time" in granted.transcript_time_basis(turns[1:])


def test_next_tuesday_said_on_a_monday_still_gets_a_review_time(granted):
    detail = granted.extract_transcript(agent_id="assistant", user_id="alice", turns=[{"role": "user", "content": TOKYO}],
                                        reference_time="2026-03-02T09:00:00Z")  # a Monday
    assert detail.status == "succeeded"
    row = tokyo_record(granted)
    assert (row["source_kind"], row["status"]) == ("user_statement", "confirmed")
    assert row["review_at"] == "2026-03-11T00:00:00.000000Z"  # after Tuesday 10 March, the later of the two readings
    assert "(2026-03-03 or 2026-03-10)" in row["content"]


@pytest.mark.parametrize("given, turns, says", [
    ("2026-03-06T10:00:00Z", [{"role": "user", "content": TOKYO}], "in the future"),
    ("last week", [{"role": "user", "content": TOKYO}], "reference_time must be an ISO-8601"),
    (None, [{"role": "user", "content": "Hi"}, {"role": "user", "content": TOKYO, "at": "not a time"}], "turn 1 at"),
    (None, [{"role": "user", "content": "Hi"}, {"role": "narrator", "content": TOKYO}], "turn 1: role must be"),
    (None, [{"role": "user", "content": "Hi"}, {"role": "user", "content": "x" * 200_001}], "turn 1 is longer"),
    (None, [{"role": "user", "content": "Hi"}, {"role": "user", "content": "bad \ud800"}], "turn 1 content"),
])
def test_a_bad_time_is_refused_and_records_nothing(granted, given, turns, says):
    with pytest.raises(InvalidInputError, match=says):
        granted.extract_transcript(agent_id="assistant", user_id="alice", turns=turns, reference_time=given)
    assert granted.store.scalar("SELECT COUNT(*) FROM sessions") == 0
    assert granted.store.scalar("SELECT COUNT(*) FROM extraction_runs") == 0
