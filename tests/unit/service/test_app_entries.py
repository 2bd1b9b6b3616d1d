"""A memory written or edited by a person in the admin app goes through the write path with an honest source."""

import re

import pytest

from memory_core.errors import InvalidInputError, PolicyError
from memory_core.service.app_entries import APP_AGENT, entered_by


def live_count(service) -> int:
    return service.store.scalar("SELECT COUNT(*) FROM records WHERE status IN ('provisional','confirmed')")


def test_a_user_writing_about_themselves_makes_an_evidenced_user_statement(service):
    out = service.enter_memory(user_id="alice", content="I prefer tea to coffee.", actor="ui:alice", as_user=True)
    record = service.record(out.record.id)
    assert (record.scope, record.source_kind, record.status) == ("user:alice", "user_statement", "confirmed")
    assert record.evidence == "I prefer tea to coffee." and record.creator_agent_id == APP_AGENT
    assert entered_by(record) == "ui:alice"
    created = service.events_for(record.id)[0]
    assert created["actor"] == "ui:alice" and "app_entry" in created["reason"]
    assert record.subject_entity_id is not None  # linked to alice's own entity, as a tool write is


def test_staff_write_for_a_user_as_a_system_record_with_its_reason(service):
    with pytest.raises(InvalidInputError, match="reason"):
        service.enter_memory(user_id="alice", content="Alice works from Lisbon.", actor="ui:omar", as_user=False)
    assert live_count(service) == 0
    out = service.enter_memory(user_id="alice", content="Alice works from Lisbon.", actor="ui:omar", as_user=False,
                               reason="HR record")
    record = service.record(out.record.id)
    assert (record.source_kind, entered_by(record)) == ("system", "ui:omar")
    assert service.events_for(record.id)[0]["reason"] == "app_entry: HR record"


def test_the_same_entry_twice_is_one_record_reinforced(service):
    first = service.enter_memory(user_id="alice", content="I am vegetarian.", actor="ui:alice", as_user=True)
    second = service.enter_memory(user_id="alice", content="I am vegetarian.", actor="ui:alice", as_user=True)
    assert second.outcome == "reinforced" and second.record.id == first.record.id
    assert live_count(service) == 1


@pytest.mark.parametrize("content, says", [
    ("", "must not be empty"), ("   \n ", "must not be empty"), ("x" * 2001, "the limit is 2000"),
    ("I live in \u202eLisbon", "U+202E"), ("tea\u200bcoffee", "U+200B"), ("hi\x07there", "control"),
    ("=HYPERLINK(\"http://x\")", "formula"), ("+cmd|' /C calc'!A0", "formula"), ("\uff1dSUM(A1)", "formula"),
    ("bad \ud800 text", "surrogate"), ("tag \U000e0041 smuggled", "U+E0041"),
])
def test_bad_entries_say_why_and_write_nothing(service, content, says):
    with pytest.raises(InvalidInputError, match=re.escape(says)):
        service.enter_memory(user_id="alice", content=content, actor="ui:alice", as_user=True)
    assert live_count(service) == 0
    assert service.store.scalar("SELECT COUNT(*) FROM events") == 0


def test_ordinary_unicode_is_welcome(service):
    text = "Je préfère le thé 🍵; ich wohne in Köln; 我喜欢茶; 👩‍💻 is my emoji"
    assert service.enter_memory(user_id="alice", content=text, actor="ui:alice", as_user=True).record.content == text


def test_a_users_revision_keeps_the_history_and_names_who_made_it(service):
    first = service.enter_memory(user_id="alice", content="I live in Porto.", actor="ui:alice", as_user=True)
    out = service.revise_entry(first.record.id, content="I live in Lisbon.", actor="ui:alice", as_user=True,
                               reason="moved in May")
    new = service.record(out.record.id)
    old = service.record(first.record.id)
    assert (old.status, old.superseded_by_id) == ("superseded", new.id)
    assert (new.content, new.evidence, new.source_kind, new.version) == ("I live in Lisbon.", "I live in Lisbon.",
                                                                        "user_statement", 2)
    assert any(e["actor"] == "ui:alice" and "moved in May" in (e["reason"] or "") for e in service.events_for(new.id))
    assert [r.id for r in service.lineage(new.id)] == [old.id, new.id]


def test_staff_cannot_overwrite_what_the_user_said_but_may_correct_an_inference(service, alice):
    mine = service.enter_memory(user_id="alice", content="I live in Porto.", actor="ui:alice", as_user=True)
    with pytest.raises(PolicyError, match="cannot replace the user's own statement"):
        service.revise_entry(mine.record.id, content="Alice lives in Faro.", actor="ui:omar", as_user=False,
                             reason="typo")
    assert service.record(mine.record.id).status == "confirmed"
    guess = alice.call_tool("memory_write", {"type": "semantic", "content": "The user probably likes jazz.",
                                             "source_kind": "agent_inference", "attribute": "music"})
    out = service.revise_entry(guess["record_id"], content="The user likes jazz and blues.", actor="ui:omar",
                               as_user=False, reason="she told me at the offsite")
    assert (out.record.source_kind, out.record.status) == ("system", "confirmed")


def test_a_revision_must_change_something_and_needs_valid_text(service):
    first = service.enter_memory(user_id="alice", content="I live in Porto.", actor="ui:alice", as_user=True)
    for content, says in (("I live in Porto.", "the same"), ("", "must not be empty"), ("@SUM(A1)", "formula")):
        with pytest.raises(InvalidInputError, match=says):
            service.revise_entry(first.record.id, content=content, actor="ui:alice", as_user=True)
    assert service.record(first.record.id).status == "confirmed" and live_count(service) == 1
