"""Fuzzed memory_write arguments: a structured answer every time, never an internal error; a
refusal leaves exactly one refused write-log row; a different value never reinforces."""

import json

from hypothesis import HealthCheck, given, settings, strategies as st

ODD = st.sampled_from(["", " ", "\u200b", "\U0001F3B7", "é\u0301", "\u202e", "NaN", "-0", "1e309", "0x1F", "٣٤٥", "１２３", "∞",
                       "12:61", "2026-02-30", "$-5", "UTC+99", "::1", "999.999.999.999", "a" * 300])
values = st.one_of(ODD, st.text(max_size=60), st.integers(), st.floats(allow_nan=True), st.none(), st.lists(st.text(max_size=5), max_size=3))
FIELDS = ["type", "content", "attribute", "target", "source_kind", "evidence", "about", "about_kind", "mentions", "tags",
          "event_at", "valid_from", "valid_until", "review_at", "procedure", "surprise"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=st.dictionaries(st.sampled_from(FIELDS), values, max_size=8))
def test_fuzzed_arguments_get_a_structured_answer(alice, args):
    before = alice.service.store.scalar("SELECT COUNT(*) FROM write_log WHERE outcome = 'refused'")
    result = alice.call_tool("memory_write", args)
    json.dumps(result)
    if result["ok"]:
        assert result["outcome"] in ("created", "reinforced")
    else:
        assert result["error"]["code"] != "internal_error", result
        after = alice.service.store.scalar("SELECT COUNT(*) FROM write_log WHERE outcome = 'refused'")
        assert after == before + 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.one_of(ODD, st.text(min_size=1, max_size=40)).filter(lambda v: v.strip()), n=st.integers(0, 10**6))
def test_a_changed_number_on_the_same_subject_never_reinforces(alice, value, n):
    first = alice.call_tool("memory_write", {"type": "semantic", "content": f"The user's {value} count is {n}.", "attribute": "fuzz"})
    second = alice.call_tool("memory_write", {"type": "semantic", "content": f"The user's {value} count is {n + 1}.", "attribute": "fuzz"})
    assert first["ok"] and second["ok"], (first, second)
    assert second["outcome"] == "created" and first["record_id"] in second["superseded"] + second["conflicts_with"] \
        or first["outcome"] == "reinforced"  # the first call itself restated an earlier example's claim
