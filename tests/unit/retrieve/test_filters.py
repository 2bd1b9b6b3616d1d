"""The hard filter: lifecycle, historical mode, types and the event-time window."""

import pytest

from memory_core.errors import InvalidInputError

from .helpers import search, set_status, write


def _all_candidate_ids(response):
    ids = set()
    for name in ("dense", "lexical", "entity"):
        ids |= {c["id"] for c in response.trace.stage(name).outputs.get("candidates", [])}
    return ids


def test_superseded_records_are_excluded_unless_historical(service, alice):
    old = write(alice, "The user lives in Porto.", attribute="home_city")
    new = write(alice, "The user lives in Lisbon now.", attribute="home_city")
    assert service.record(old).status == "superseded"
    live = search(service, alice, "where does the user live Porto Lisbon")
    assert old not in _all_candidate_ids(live) and new in live.record_ids
    history = search(service, alice, "where does the user live Porto Lisbon", historical=True)
    assert {old, new} <= set(history.record_ids)
    assert history.trace.stage("hard_filter").outputs["statuses"] == ["provisional", "confirmed", "superseded", "expired"]


def test_expired_and_lapsed_provisional_records_are_excluded(make_service, clock):
    service = make_service(cosine_floor=0.2)
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    alice = service.start_session(agent_id="assistant", user_id="alice")
    expired = write(alice, "The user is training for a marathon.", attribute="training")
    set_status(service, expired, "expired")
    lapsed = write(alice, "The user is learning the marathon route.", attribute="route")
    assert service.record(lapsed).status == "provisional"
    clock.advance(days=31)  # past the provisional record's expiry; no maintenance pass has run
    live = search(service, alice, "marathon training route")
    assert not {expired, lapsed} & _all_candidate_ids(live)
    assert live.trace.stage("hard_filter").outputs["lapsed_provisional_excluded"] == 1
    history = search(service, alice, "marathon training route", historical=True)
    assert {expired, lapsed} <= set(history.record_ids)


def test_forgotten_records_are_never_candidates(service, alice):
    gone = write(alice, "The user's bank PIN hint is the cat's name.", attribute="pin_hint")
    alice.call_tool("memory_forget", {"record_id": gone, "reason": "user asked"})
    response = search(service, alice, "bank PIN hint cat name", historical=True)
    assert gone not in _all_candidate_ids(response)


def test_type_filter(service, alice):
    fact = write(alice, "The user likes hiking in the Alps.", attribute="hobby")
    event = write(alice, "The user went hiking in the Alps last weekend.", type="episodic")
    only_events = search(service, alice, "hiking Alps", types=["episodic"])
    assert only_events.record_ids == [event]
    assert fact not in _all_candidate_ids(only_events)
    both = search(service, alice, "hiking Alps", types=["semantic", "episodic"])
    assert set(both.record_ids) == {fact, event}


def test_event_time_window_includes_only_records_with_an_event_time_inside(service, alice):
    march = write(alice, "Team offsite in Sintra about the roadmap.", type="episodic", event_at="2026-03-01T09:00:00Z")
    january = write(alice, "Team offsite in Sintra about hiring.", type="episodic", event_at="2026-01-10T09:00:00Z")
    undated = write(alice, "The user enjoys offsites in Sintra.", attribute="offsites")
    response = search(service, alice, "offsite Sintra", time_from="2026-02-01", time_to="2026-03-01")
    assert response.record_ids == [march]  # time_to as a date covers that whole day
    assert not {january, undated} & _all_candidate_ids(response)
    assert response.request.time_to == "2026-03-01T23:59:59.999999Z"
    older = search(service, alice, "offsite Sintra", time_to="2026-02-01T00:00:00Z")
    assert older.record_ids == [january]


@pytest.mark.parametrize("args,field", [
    ({"query": "   "}, "query"),
    ({"query": "x" * 5000}, "query"),
    ({"query": "x", "types": ["memo"]}, "types"),
    ({"query": "x", "limit": 0}, "limit"),
    ({"query": "x", "limit": 10_000}, "limit"),
    ({"query": "x", "time_from": "yesterday"}, "time_from"),
    ({"query": "x", "time_from": "2026-03-02", "time_to": "2026-03-01"}, "time_from"),
    ({"query": "x", "entity_hints": [""]}, "entity_hints"),
])
def test_bad_arguments_are_refused_with_the_field(service, alice, args, field):
    with pytest.raises(InvalidInputError) as info:
        service.search(agent_id="assistant", user_id="alice", **args)
    assert info.value.details["field"] == field
