from hypothesis import HealthCheck, given, settings, strategies as st

TRICKY = st.sampled_from([
    "O'Brien said \"hi\"", "'; DROP TABLE records; --", "NEAR(a b) OR c* -d AND (e) content:x ^f",
    "emoji 🧠🔥 and ZWJ 👩‍💻", "Ελληνικά και 日本語 и русский", "tab\tnewline\nend", "  leading and trailing  ",
    "\\backslash\\ %percent% _under_", "{\"json\": [1, 2]}", "<script>alert(1)</script> **bold**",
])
contents = st.one_of(TRICKY, st.text(min_size=1, max_size=300)).filter(lambda s: s.strip() and "\x00" not in s)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# An attribute is absent or holds text (issue 24: a blank one is refused, as for every text field).
@given(content=contents, attribute=st.one_of(st.none(), st.text(min_size=1, max_size=30).filter(str.strip)))
def test_content_round_trips_exactly(alice, content, attribute):
    result = alice.call_tool("memory_write", {"type": "episodic", "content": content, "attribute": attribute, "tags": ["t'1", "ü"]})
    assert result["ok"], result
    got = alice.call_tool("memory_get", {"record_id": result["record_id"]})
    assert got["ok"]
    if result["outcome"] == "created":
        assert got["record"]["content"] == content
        assert got["record"]["tags"] == ["t'1", "ü"]
    seq = alice.service.record(result["record_id"]).seq
    stored = alice.service.store.query_one("SELECT content FROM records_fts WHERE rowid = ?", (seq,))
    assert stored["content"] == got["record"]["content"]
