"""As-of search (issue 30) with the real packaged MiniLM, on the backend the run selects.

The scenarios of the issue: a preference changed twice answers with the value that held at each
of three instants; a planned event is valid only inside its bounds; a forgotten record is absent
at every instant. Each test builds its own small store through the model's tools, moving a fixed
clock between writes.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from benchmarks.extraction_eval import build_embedder
from memory_core import FixedClock, MemoryService, load_settings
from memory_core.clock import format_ts

pytestmark = pytest.mark.model
START = datetime(2026, 1, 10, 9, 0, tzinfo=timezone.utc)
QUERY = "What drink does the user prefer in the morning?"


@pytest.fixture(scope="module")
def embedder():
    return build_embedder("packaged", load_settings())


@pytest.fixture
def svc(store_target, embedder):
    service = MemoryService.open(store_target, load_settings(), clock=FixedClock(START), embedder=embedder)
    service.grant("assistant", "user:ana", read=True, write=True, actor="test")
    yield service
    service.close()


def _write(service: MemoryService, said: str, content: str, attribute: str, **extra) -> str:
    session = service.start_session(agent_id="assistant", user_id="ana")
    session.record_turn("user", said)
    result = session.call_tool("memory_write", {"type": "semantic", "content": content, "attribute": attribute,
                                                "source_kind": "user_statement", "evidence": said, **extra})
    assert result["ok"], result
    return result["record_id"]


def _search(service: MemoryService, query: str, **options) -> dict:
    return service.start_session(agent_id="assistant", user_id="ana").call_tool("memory_search", {"query": query, **options})


def _contents(result: dict) -> list[str]:
    assert result["ok"], result
    return [r["content"] for r in result["results"]]


def _drinks(service: MemoryService) -> tuple[list[str], list[str]]:
    """Three versions of one preference, a day apart; returns their ids and the instants between."""
    ids, instants = [], []
    for said, content in (("I drink tea every morning.", "The user prefers tea in the morning."),
                          ("I switched to coffee in the mornings now.", "The user prefers coffee in the morning."),
                          ("These days I only drink hot chocolate in the morning.", "The user prefers hot chocolate in the morning.")):
        ids.append(_write(service, said, content, "morning_drink"))
        service.clock.advance(hours=12)
        instants.append(format_ts(service.clock.now()))
        service.clock.advance(hours=12)
    return ids, instants


def test_a_preference_changed_twice_answers_the_value_held_at_each_instant(svc):
    ids, instants = _drinks(svc)
    assert [svc.record(i).status for i in ids] == ["superseded", "superseded", "confirmed"]
    for mode in ("memory", "world"):
        for instant, drink in zip(instants, ("tea", "coffee", "hot chocolate")):
            result = _search(svc, QUERY, as_of=instant, as_of_mode=mode)
            assert _contents(result) == [f"The user prefers {drink} in the morning."], (mode, instant, result)
            assert result["explanation"]["as_of"] == {"at": instant, "mode": mode}
    # the version shown is as it was: live then, not "superseded"
    first = _search(svc, QUERY, as_of=instants[0])["results"][0]
    assert first["id"] == ids[0] and first["status"] == "confirmed"
    # and a search without as_of still answers today's value only
    assert [c for c in _contents(_search(svc, QUERY)) if "prefers" in c] == ["The user prefers hot chocolate in the morning."]


def test_before_anything_was_written_nothing_was_live(svc):
    _drinks(svc)
    result = _search(svc, QUERY, as_of="2025-12-31T23:00:00Z")
    assert result["ok"] and result["results"] == []
    assert "nothing was live at 2025-12-31T23:00:00.000000Z in " in result["empty_reason"], result["empty_reason"]


def test_a_planned_event_is_valid_only_inside_its_bounds(svc):
    said = "I will be at the Lisbon conference from March 2 to March 6."
    _write(svc, said, "The user attends the Lisbon conference.", "conference_trip",
           valid_from="2026-03-02T00:00:00Z", valid_until="2026-03-06T00:00:00Z")
    query = "Is the user at the Lisbon conference?"
    inside = _contents(_search(svc, query, as_of="2026-03-04T12:00:00Z", as_of_mode="world"))
    assert inside == ["The user attends the Lisbon conference."]
    for outside in ("2026-03-01T23:59:59Z", "2026-03-06T00:00:00Z", "2026-04-01T00:00:00+02:00"):
        result = _search(svc, query, as_of=outside, as_of_mode="world")
        assert _contents(result) == [], outside
        assert "nothing was valid at" in result["empty_reason"], result["empty_reason"]

    # in memory mode it is held from the moment it was written, whatever its validity
    held = _contents(_search(svc, query, as_of=format_ts(svc.clock.now())))
    assert held == ["The user attends the Lisbon conference."]


def test_a_forgotten_record_is_absent_at_every_instant(svc):
    ids, instants = _drinks(svc)
    svc.forget(ids[-1], actor="test", reason="the user asked")  # the newest version: its lineage goes too
    assert {svc.record(i).status for i in ids} == {"deleted"}
    for instant in [*instants, "2026-01-10T09:00:00Z"]:
        for mode in ("memory", "world"):
            result = _search(svc, QUERY, as_of=instant, as_of_mode=mode)
            assert result["ok"] and not set(r["id"] for r in result["results"]) & set(ids), (instant, mode, result)


def test_forgetting_an_old_version_keeps_it_gone_while_the_others_answer(svc):
    ids, instants = _drinks(svc)
    svc.forget(ids[0], actor="test", reason="wrong")
    assert svc.record(ids[0]).status == "deleted"
    assert not {r["id"] for r in _search(svc, QUERY, as_of=instants[0])["results"]} & {ids[0]}
    assert "coffee" in _contents(_search(svc, QUERY, as_of=instants[1]))[0]


def test_dense_candidates_outside_the_as_of_set_are_filtered_and_counted(svc):
    _ids, instants = _drinks(svc)
    response = svc.search(agent_id="assistant", user_id="ana", query=QUERY, as_of=instants[0])
    hard = response.trace.stage("hard_filter").outputs
    assert hard["as_of"] == {"at": instants[0], "mode": "memory"}
    assert hard["as_of_excluded"] == 2 and hard["as_of_records"] == 1 and hard["indexed_rows_allowed"] == 1
    dense = [c["id"] for c in response.trace.stage("dense").outputs["candidates"]]
    assert dense == [response.record_ids[0]]
    assert "as of " + instants[0] in response.trace.stage("hard_filter").notes[0]


def test_the_search_log_keeps_the_as_of_parameters_and_a_replay_uses_them(svc):
    _ids, instants = _drinks(svc)
    response = svc.search(agent_id="assistant", user_id="ana", query=QUERY, as_of=instants[1], as_of_mode="world")
    logged = svc.load_search(response.search_id)
    assert (logged.request.as_of, logged.request.as_of_mode) == (instants[1], "world")
    replay = svc.replay_search(response.search_id)
    assert replay.record_ids == response.record_ids


@pytest.mark.parametrize("options,field", [
    ({"as_of": "2026-01-10"}, "as_of"),  # a bare date: which day's end, in which zone?
    ({"as_of": "2026-01-10T12:00:00"}, "as_of"),  # no offset
    ({"as_of": "2026-02-30T12:00:00Z"}, "as_of"),
    ({"as_of": "yesterday"}, "as_of"),
    ({"as_of": "2026-01-10T12:00:00Z", "as_of_mode": "both"}, "as_of_mode"),
    ({"as_of_mode": "world"}, "as_of_mode"),
    ({"as_of": "2026-01-10T12:00:00Z", "historical": True}, "historical"),
    ({"as_of": "2027-01-01T00:00:00Z"}, "as_of"),  # memory mode in the future
])
def test_bad_as_of_input_is_a_structured_error_and_logs_nothing(svc, options, field):
    _drinks(svc)
    before = len(svc.recent_searches(500))
    result = _search(svc, QUERY, **options)
    assert result["ok"] is False, result
    assert field in str(result), result
    assert len(svc.recent_searches(500)) == before


def test_world_mode_may_look_ahead(svc):
    _write(svc, "Next month I'll be in Lisbon from March 2 to March 6.", "The user attends the Lisbon conference.",
           "conference_trip", valid_from="2026-03-02T00:00:00Z", valid_until="2026-03-06T00:00:00Z")
    ahead = _search(svc, "Is the user at the Lisbon conference?", as_of="2026-03-03T00:00:00Z", as_of_mode="world")
    assert _contents(ahead) == ["The user attends the Lisbon conference."]


def test_an_event_time_window_counts_only_its_own_cost_in_an_as_of_search(svc):
    _ids, instants = _drinks(svc)
    response = svc.search(agent_id="assistant", user_id="ana", query=QUERY, as_of=instants[2], time_from="2030-01-01T00:00:00Z")
    window = response.trace.stage("time_window").outputs
    assert window["removed"] == 1 and window["readable_records"] == 0  # one record held then, not three
