"""One SearchRequest from the tool handler down: the search's parameters are written once."""

import json
from dataclasses import fields

import pytest

from memory_core.errors import InvalidInputError
from memory_core.retrieve import SearchRequest
from memory_core.retrieve.request import MAX_HINT_CHARS, MAX_HINTS
from memory_core.tools.search_tool import MemorySearchInput

from .helpers import write


def test_the_tool_schema_is_a_subset_of_the_request():
    request_fields = {f.name for f in fields(SearchRequest)}
    assert set(MemorySearchInput.model_fields) <= request_fields
    hints = MemorySearchInput.model_json_schema()["properties"]["entity_hints"]
    assert hints["maxItems"] == MAX_HINTS and hints["items"]["maxLength"] == MAX_HINT_CHARS  # the bounds the check applies


def test_every_option_a_model_gives_reaches_the_logged_request(service, alice):
    write(alice, "The user drinks green tea.", attribute="drink", type="episodic", event_at="2026-03-01T09:00:00Z")
    options = {"query": "what does the user drink?", "types": ["episodic"], "time_from": "2026-02-01", "time_to": "2026-03-04",
               "entity_hints": ["Priya"], "limit": 3, "historical": True}
    reply = alice.call_tool("memory_search", options)
    assert reply["ok"], reply
    logged = json.loads(service.store.scalar("SELECT request FROM search_log WHERE id = ?", (reply["search_id"],)))["request"]
    assert logged == {"agent_id": "assistant", "user_id": "alice", "query": options["query"], "types": ["episodic"],
                      "time_from": "2026-02-01T00:00:00.000000Z", "time_to": "2026-03-04T23:59:59.999999Z",
                      "entity_hints": ["Priya"], "limit": 3, "historical": True, "context": None, "rewrite": None, "rerank": None,
                      "session_id": alice.id, "replay_of": None, "origin": "model", "as_of": None, "as_of_mode": None}


def test_the_as_of_options_reach_the_logged_request(service, alice):
    write(alice, "The user drinks green tea.", attribute="drink")
    reply = alice.call_tool("memory_search", {"query": "what does the user drink?", "as_of": "2026-03-05T11:00:00+01:00",
                                              "as_of_mode": "world"})
    assert reply["ok"], reply
    logged = json.loads(service.store.scalar("SELECT request FROM search_log WHERE id = ?", (reply["search_id"],)))["request"]
    assert (logged["as_of"], logged["as_of_mode"]) == ("2026-03-05T10:00:00.000000Z", "world")
    assert reply["explanation"]["as_of"] == {"at": "2026-03-05T10:00:00.000000Z", "mode": "world"}


def test_a_request_or_its_fields_search_alike(service, alice):
    write(alice, "The user drinks green tea.", attribute="drink")
    request = SearchRequest(agent_id="assistant", user_id="alice", query="green tea", limit=2)
    by_object = service.search(request)
    by_fields = service.search(agent_id="assistant", user_id="alice", query="green tea", limit=2)
    assert by_object.record_ids == by_fields.record_ids and by_object.request == by_fields.request
    assert request.limit == 2 and request.entity_hints is None  # checking gives a new request; the caller's is untouched
    with pytest.raises(TypeError, match="not both"):
        service.search(request, limit=3)


def test_checking_normalises_and_is_idempotent(settings):
    raw = SearchRequest(agent_id="a", user_id="u", query="q", types=["procedural", "semantic"], time_to="2026-03-04",
                        entity_hints=["  Priya "], context="x" * 10_000)
    checked = raw.checked(settings.retrieval)
    assert checked.types == ["semantic", "procedural"] and checked.entity_hints == ["Priya"]
    assert checked.limit == settings.retrieval.default_limit and len(checked.context) == settings.retrieval.rewrite_context_chars
    assert checked.time_to == "2026-03-04T23:59:59.999999Z" and checked.checked(settings.retrieval) == checked


@pytest.mark.parametrize("value", ["2026-03-01T09:00:00+25:00", "２０２６-03-01T09:00:00Z", "2026-03-01T09:00:00Z" + "0" * 100,
                                   "9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00", "2026-03-01T09:00:00\u202eZ",
                                   "", "   ", "2026-03-01 09:00", 20260301, ["2026-03-01T09:00:00Z"]])
def test_odd_as_of_values_are_refused_naming_the_field(settings, value):
    with pytest.raises(InvalidInputError) as caught:
        SearchRequest(agent_id="a", user_id="u", query="q", as_of=value).checked(settings.retrieval)
    assert caught.value.details.get("field") == "as_of"


def test_an_as_of_with_an_offset_is_kept_in_utc_and_a_naive_datetime_refused(settings):
    from datetime import datetime, timedelta, timezone

    checked = SearchRequest(agent_id="a", user_id="u", query="q", as_of="2026-03-01T09:00:00-05:30").checked(settings.retrieval)
    assert (checked.as_of, checked.as_of_mode) == ("2026-03-01T14:30:00.000000Z", "memory")
    aware = datetime(2026, 3, 1, 9, tzinfo=timezone(timedelta(hours=2)))
    assert SearchRequest(agent_id="a", user_id="u", query="q", as_of=aware).checked(settings.retrieval).as_of == "2026-03-01T07:00:00.000000Z"
    with pytest.raises(InvalidInputError, match="time zone"):
        SearchRequest(agent_id="a", user_id="u", query="q", as_of=datetime(2026, 3, 1, 9)).checked(settings.retrieval)
