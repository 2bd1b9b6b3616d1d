"""Defects 2 and 8: hostile dates, bytes, nesting, surrogates and ids.

Every date field of every tool, over the whole year range with offsets, either works or answers
``invalid_input`` (never ``internal_error``); a refused call writes nothing and logs no search;
the store always reopens and keeps working.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.clock import format_ts, parse_ts
from memory_core.errors import InvalidInputError
from memory_core.policy.scopes import parse_scope, validate_id
from tests.fakes import HashingEmbedder

WRITE_FIELDS = ("event_at", "valid_from", "valid_until", "review_at")
REVISE_FIELDS = ("valid_from", "valid_until", "review_at")
SEARCH_FIELDS = ("time_from", "time_to")

offsets = st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59).map(lambda m: timezone(timedelta(minutes=m)))
moments = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999))


@st.composite
def date_texts(draw) -> str:
    kind = draw(st.sampled_from(["aware", "naive", "date", "z", "edge", "leap", "junk"]))
    moment = draw(moments)
    if kind == "aware":
        return moment.replace(tzinfo=draw(offsets)).isoformat()
    if kind == "naive":
        return moment.isoformat()
    if kind == "date":
        return moment.date().isoformat()
    if kind == "z":
        return moment.isoformat() + "Z"
    if kind == "edge":
        return draw(st.sampled_from([
            "0001-01-01", "0999-12-31", "0001-01-01T00:00:00+01:00", "9999-12-31", "9999-12-31T23:59:59.999999-00:01",
            "9999-12-31T23:00-05:00", "0000-01-01", "10000-01-01", "999-12-31", "1-01-01", "2023-02-29", "2024-02-29",
            "2100-02-29", "2000-02-29T24:00:00", "2026-13-01", "2026-00-10", "+2026-01-01", "-0001-01-01",
            "2026-01-01T10:00+24:00", "2026-01-01T10:00+23:59", " 2026-01-01 ", "2026-01-01\n", "2026-01-01\x00",
            "２０２６-01-01", "2026-01-01T10:00:00.1234567Z", "nan", "", " ", "Z", "T", "2026-W01", "20260101",
        ]))
    if kind == "leap":
        year = draw(st.integers(min_value=1, max_value=9999))
        return f"{year:04d}-02-29"
    return draw(st.text(max_size=40))


def _counts(service) -> tuple[int, ...]:
    q = service.store.scalar
    return (q("SELECT COUNT(*) FROM records"), q("SELECT COUNT(*) FROM write_log WHERE outcome != 'refused'"), q("SELECT COUNT(*) FROM search_log"),
            q("SELECT COUNT(*) FROM events"), q("SELECT COUNT(*) FROM turns"))


def _assert_reopens_and_works(path) -> None:
    reopened = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    try:
        session = reopened.start_session(agent_id="assistant", user_id="alice")
        found = session.call_tool("memory_search", {"query": "green bicycle"})
        assert found["ok"], found
        made = session.call_tool("memory_write", {"type": "episodic", "content": "The user fixed the bike chain."})
        assert made["ok"], made
    finally:
        reopened.close()


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "memory.sqlite"
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    session = service.start_session(agent_id="assistant", user_id="alice")
    base = session.call_tool("memory_write", {"type": "semantic", "content": "The user owns a green bicycle.", "attribute": "bike"})
    assert base["ok"]
    yield service, session, path
    service.close()


def _check(service, result: dict, before: tuple[int, ...], *, writes: bool) -> None:
    assert result["ok"] or result["error"]["code"] != "internal_error", result
    if not result["ok"]:
        assert result["error"]["code"] in ("invalid_input", "conflict", "policy_violation"), result
        assert _counts(service) == before, "a refused call changed the store"


@hsettings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(field=st.sampled_from(WRITE_FIELDS), value=date_texts(), episodic=st.booleans())
def test_memory_write_dates(fuzz_store, field, value, episodic):
    service, session, path = fuzz_store
    before = _counts(service)
    args = {"type": "episodic" if episodic else "semantic", "content": f"The user visited the museum ({value!r}).",
            "attribute": None if episodic else "museum_visit", field: value}
    result = session.call_tool("memory_write", args)
    _check(service, result, before, writes=True)
    if result["ok"]:
        stored = service.record(result["record_id"])
        if getattr(stored, field) is not None:
            assert parse_ts(getattr(stored, field)) is not None  # what was stored can be read back
            assert len(getattr(stored, field)) == 27
        # A record with odd dates can still be revised (defect 2: years < 1000 blocked revisions).
        if not episodic and stored.status in ("provisional", "confirmed"):
            revised = session.call_tool("memory_revise", {"action": "update", "record_id": stored.id,
                                                          "content": "The user visited the science museum.", "reason": "fuzz"})
            assert revised["ok"] or revised["error"]["code"] != "internal_error", revised


@hsettings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(field=st.sampled_from(REVISE_FIELDS), value=date_texts())
def test_memory_revise_dates(fuzz_store, field, value):
    service, session, path = fuzz_store
    made = session.call_tool("memory_write", {"type": "semantic", "content": "The user's locker is number 12.", "attribute": "locker"})
    assert made["ok"], made
    before = _counts(service)
    result = session.call_tool("memory_revise", {"action": "update", "record_id": made["record_id"],
                                                 "content": "The user's locker is number 14.", "reason": "moved", field: value})
    _check(service, result, before, writes=True)


@hsettings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(time_from=st.one_of(st.none(), date_texts()), time_to=st.one_of(st.none(), date_texts()))
def test_memory_search_dates(fuzz_store, time_from, time_to):
    service, session, path = fuzz_store
    before = _counts(service)
    args = {"query": "museum visit", **({"time_from": time_from} if time_from is not None else {}),
            **({"time_to": time_to} if time_to is not None else {})}
    result = session.call_tool("memory_search", args)
    _check(service, result, before, writes=False)
    if result["ok"]:
        assert _counts(service)[2] == before[2] + 1  # a search that ran is logged once


@hsettings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(value=date_texts())
def test_record_turn_and_review_dates(fuzz_store, value):
    service, session, path = fuzz_store
    before = _counts(service)
    try:
        session.record_turn("user", "I went to the museum.", at=value)
    except InvalidInputError:
        assert _counts(service) == before
    made = session.call_tool("memory_write", {"type": "semantic", "content": "The user's gym is Pulse.", "attribute": "gym",
                                              "review_at": "2026-01-01"})
    service.run_maintenance()
    record = service.record(made["record_id"])
    if record.review_flagged_at:
        try:
            service.lifecycle.clear_review_flag(record.id, actor="test", reason="fine", next_review_at=value)
        except InvalidInputError:
            pass


def test_the_store_reopens_after_the_fuzzing(fuzz_store):
    service, session, path = fuzz_store
    for value in ("0999-12-31", "0001-01-01", "9999-12-31", "0001-01-01T00:30+00:30"):
        result = session.call_tool("memory_write", {"type": "episodic", "content": f"Something happened on {value}.", "event_at": value})
        assert result["ok"], result
        assert session.call_tool("memory_search", {"query": "something happened", "time_from": value})["ok"]
        assert session.call_tool("memory_search", {"query": "something happened", "time_to": value})["ok"]
    _assert_reopens_and_works(path)


def test_years_below_1000_round_trip_and_sort():
    early = parse_ts("0999-12-31")
    assert format_ts(early) == "0999-12-31T00:00:00.000000Z"
    assert format_ts(early) < format_ts(parse_ts("1000-01-01")) < format_ts(parse_ts("9999-12-31"))
    # A value stored by the old formatter (three-digit year) still parses, so old stores reopen.
    assert parse_ts("999-12-31T00:00:00.000000Z") == early
    for bad in ("0001-01-01T00:00+01:00", "9999-12-31T23:30-01:00", "x" * 100, "2026-01-01\x00"):
        with pytest.raises(ValueError):
            parse_ts(bad)


def test_bytes_depth_and_surrogates_are_invalid_input(fuzz_store):
    service, session, path = fuzz_store
    before = _counts(service)
    for raw in (b"\xff\xfe{not utf8", b'{"query": "caf\xe9"}', "[" * 100_000 + "]" * 100_000, '{"query": ' + "[" * 100_000 + "]" * 100_000 + "}"):
        result = session.call_tool("memory_search", raw)
        assert result["error"]["code"] == "invalid_input", result
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert session.call_tool("memory_write", {"type": "semantic", "content": "x", "tags": deep})["error"]["code"] == "invalid_input"
    lone = json.loads('"The user likes \\ud800 tea."')
    for name, args in (("memory_write", {"type": "semantic", "content": lone, "attribute": "tea"}),
                       ("memory_search", {"query": lone}), ("memory_write", {"type": "semantic", "content": "ok", "tags": [lone]})):
        result = session.call_tool(name, args)
        assert result["error"]["code"] == "invalid_input", result
    with pytest.raises(InvalidInputError):
        session.record_turn("user", lone)
    with pytest.raises(InvalidInputError):
        service.search(agent_id="assistant", user_id="alice", query=lone)
    assert _counts(service) == before


@pytest.mark.parametrize("bad", ["alice\n", "alice\r\n", "\nalice", "al ice", "alice/", "", "a" * 129])
def test_ids_must_match_in_full(bad):
    with pytest.raises(InvalidInputError):
        validate_id(bad, "user_id")
    with pytest.raises(InvalidInputError):
        parse_scope(f"user:{bad}")


def test_trailing_newline_ids_are_refused_everywhere(service):
    with pytest.raises(InvalidInputError):
        service.start_session(agent_id="assistant", user_id="alice\n")
    with pytest.raises(InvalidInputError):
        service.grant("assistant\n", "user:alice", actor="t")
    with pytest.raises(InvalidInputError):
        service.grant("assistant", "user:alice\n", actor="t")
    assert service.grants() == []


@hsettings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(field=st.sampled_from(WRITE_FIELDS), value=date_texts())
def test_the_store_reopens_after_every_accepted_date(tmp_path_factory, field, value):
    path = tmp_path_factory.mktemp("reopen") / "memory.sqlite"
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    session = service.start_session(agent_id="assistant", user_id="alice")
    session.call_tool("memory_write", {"type": "semantic", "content": "The user owns a green bicycle.", "attribute": "bike"})
    result = session.call_tool("memory_write", {"type": "episodic", "content": "The user went sailing.", field: value})
    assert result["ok"] or result["error"]["code"] == "invalid_input", result
    service.close()
    _assert_reopens_and_works(path)
