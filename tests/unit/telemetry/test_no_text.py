"""Memory text, queries, evidence and user ids stay off spans unless ``telemetry.record_content`` says so."""

from __future__ import annotations

import itertools
import json

from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st

from memory_core.errors import InvalidInputError
from memory_core.settings import default_settings
from memory_core.telemetry import Telemetry, spans

# Text that is hard to hide by accident: RTL, combining marks, emoji, NUL, lone surrogates, and plain words.
PIECES = st.sampled_from(["ש", "ع", "\u202e", "e\u0301", "🚲", "\x00", "\ud800", "\udfff", "ﷺ", "bike", " ", "'", "\"",
                          "\\", "<b>", "=1+1", "\n", "é", "ß", "İ", "Z̤͔ͧ̑"])
TEXT = st.lists(st.one_of(PIECES, st.text(min_size=1, max_size=6)), min_size=1, max_size=8).map("".join)
_serial = itertools.count()


def _values(span) -> list[str]:
    """Every attribute value and the status description of ``span``, as text."""
    out = [span.name, span.status.description or ""]
    for value in span.attributes.values():
        out.extend(str(v) for v in (value if isinstance(value, tuple) else (value,)))
    return out


def _leaks(traced, needles: list[str]) -> list[tuple[str, str]]:
    return [(span.name, needle) for span in traced.spans() for value in _values(span) for needle in needles
            if needle in value]


@hypothesis_settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=TEXT, content=TEXT, evidence=TEXT, user=st.sampled_from(["alice", "bob.smith@example.com", "user+42"]))
def test_no_query_memory_text_evidence_or_user_id_reaches_a_span_attribute(traced, query, content, evidence, user):
    marker = f"zqx{next(_serial):05d}"  # makes each text unique: no attribute can hold it by coincidence
    query, content, evidence = f"{marker}q {query}", f"{marker}c {content}", f"{marker}e {evidence}"
    service = traced.service
    service.grant("assistant", f"user:{user}", read=True, write=True, actor="test")
    session = service.start_session(agent_id="assistant", user_id=user)
    try:
        session.record_turn("user", evidence)
    except InvalidInputError:  # a lone surrogate cannot be stored: the write below is refused for it too
        pass
    traced.exporter.clear()

    written = session.call_tool("memory_write", {"type": "semantic", "content": content, "evidence": evidence,
                                                 "source_kind": "user_statement"})
    session.call_tool("memory_search", {"query": query, "entity_hints": [query[:200]]})
    session.call_tool("memory_search", {"query": content})
    try:  # the host API raises where a tool call returns the error
        service.search(agent_id="assistant", user_id=user, query=query, context=evidence)
    except InvalidInputError:
        pass
    if written.get("ok"):
        session.call_tool("memory_get", {"record_id": written["record_id"]})
        session.call_tool("memory_revise", {"action": "update", "record_id": written["record_id"], "content": content + " 2",
                                            "reason": query})
        session.call_tool("memory_forget", {"record_id": written["record_id"], "reason": query})
    session.call_tool("memory_get", {"record_id": query})  # a text where an id belongs
    session.call_tool(query, {"query": query})  # a text where a tool name belongs

    assert len(traced.spans("execute_tool memory_search")) == 2
    if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in query):  # (a lone surrogate is refused before the pipeline)
        assert traced.spans("search_memory"), "the searches made no spans"
    needles = [query, content, evidence, marker]
    if len(user) > 3:
        needles.append(user)
    assert _leaks(traced, needles) == []


def test_with_record_content_on_the_query_and_texts_are_on_the_spans(open_traced):
    traced = open_traced(default_settings(telemetry={"record_content": True}))
    traced.service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    session = traced.service.start_session(agent_id="assistant", user_id="alice")
    session.record_turn("user", "My bike is a green Brompton.")
    session.call_tool("memory_write", {"type": "semantic", "content": "The user's bike is a green Brompton.",
                                       "evidence": "My bike is a green Brompton.", "source_kind": "user_statement"})
    session.call_tool("memory_search", {"query": "which bike does the user ride"})

    upsert, search = traced.one("upsert_memory"), traced.one("search_memory")
    assert json.loads(upsert.attributes["gen_ai.memory.records"]) == [
        {"content": "The user's bike is a green Brompton.", "metadata": {"evidence": "My bike is a green Brompton."}}]
    assert search.attributes["gen_ai.memory.query.text"] == "which bike does the user ride"
    records = json.loads(search.attributes["gen_ai.memory.records"])
    assert [r["content"] for r in records] == ["The user's bike is a green Brompton."]
    assert records[0]["id"] == upsert.attributes["gen_ai.memory.record.id"]


def test_with_record_content_off_the_same_calls_carry_no_text(traced):
    session = traced.service.start_session(agent_id="assistant", user_id="alice")
    session.call_tool("memory_write", {"type": "semantic", "content": "The user's bike is a green Brompton."})
    session.call_tool("memory_search", {"query": "which bike does the user ride"})

    for span in traced.spans():
        assert not {"gen_ai.memory.query.text", "gen_ai.memory.records"} & set(span.attributes)
    assert _leaks(traced, ["Brompton", "which bike"]) == []


def test_a_user_is_one_keyed_hash_that_changes_with_the_key():
    one = Telemetry(default_settings(telemetry={"user_hash_key": "k1"}).telemetry)
    other = Telemetry(default_settings(telemetry={"user_hash_key": "k2"}).telemetry)
    assert spans.user_hash(one, "alice") == spans.user_hash(one, "alice") != spans.user_hash(one, "bob")
    assert spans.user_hash(one, "alice") != spans.user_hash(other, "alice")
    assert len(spans.user_hash(one, "alice")) == 16 and "alice" not in spans.user_hash(one, "alice")
    unset = Telemetry(default_settings().telemetry)  # a random key for this process
    assert spans.user_hash(unset, "alice") == spans.user_hash(Telemetry(default_settings().telemetry), "alice")
