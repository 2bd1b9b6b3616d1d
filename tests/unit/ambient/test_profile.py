"""Assembling, bounding, fixing and recording the ambient profile over a real SQLite store."""

from __future__ import annotations

import pytest

from memory_core.adapters.base import MemoryRuntime
from memory_core.adapters.identity import Identity
from memory_core.errors import InvalidInputError, NotFoundError, PolicyError
from memory_core.text import count_tokens
from memory_core.settings import default_settings

from .helpers import from_tool, inferred, said

PREFS = [
    ("Please answer me in French.", "The user wants answers in French.", "language"),
    ("Call me Ali, please.", "The user wants to be called Ali.", "preferred_name"),
    ("I use a screen reader, so avoid tables.", "The user uses a screen reader; avoid tables.", "accessibility_needs"),
    ("I prefer concise answers with code first.", "The user prefers concise answers with code first.", "answer_style"),
    ("Use metric units with me.", "The user wants metric units.", "units"),
]


@pytest.fixture
def assistant(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    return service.start_session(agent_id="assistant", user_id="alice", session_id="writer")


def runtime(service, **kwargs):
    return MemoryRuntime(service, framework="testhost", ambient=kwargs.pop("ambient", True), **kwargs)


def open_as(rt, session_id, user="alice", agent="assistant", project=None):
    return rt.open(Identity(agent_id=agent, user_id=user, session_id=session_id, project_id=project))


def write_prefs(session):
    return [said(session, *p) for p in PREFS]


def test_off_by_default(service, assistant):
    write_prefs(assistant)
    assert default_settings().ambient.enabled is False
    rt = MemoryRuntime(service, framework="testhost")
    session = open_as(rt, "s1")
    assert rt.prefix(session) == rt.policy()
    recorded = service.session_context("s1")
    assert recorded["ambient_enabled"] is False and recorded["profile_text"] is None and recorded["profile_items"] == []


def test_the_setting_turns_it_on_and_the_argument_wins(tmp_path, clock, assistant, service):
    write_prefs(assistant)
    on = service.settings.model_copy(update={"ambient": service.settings.ambient.model_copy(update={"enabled": True})})
    service.settings = on
    assert MemoryRuntime(service, framework="testhost").ambient is True
    assert MemoryRuntime(service, framework="testhost", ambient=False).ambient is False
    for bad in ("false", 1, "yes", []):
        with pytest.raises(InvalidInputError):
            MemoryRuntime(service, framework="testhost", ambient=bad)


def test_profile_order_is_fixed_and_items_carry_their_origin(service, assistant):
    ids = write_prefs(assistant)
    rt = runtime(service)
    session = open_as(rt, "s1")
    recorded = service.session_context("s1")
    items = recorded["profile_items"]
    assert [i["category"] for i in items] == ["language", "address", "accessibility", "answer_style", "units"]
    assert {i["record_id"] for i in items} == set(ids)
    assert all(i["version"] == 1 and i["basis"].startswith("trusted") for i in items)
    assert rt.prefix(session) == rt.policy() + "\n\n" + recorded["profile_text"]
    for item in items:
        assert f"- {item['text']}" in recorded["profile_text"]
    assert service.ambient_profile("assistant", "alice").text == recorded["profile_text"]  # deterministic


def test_bounds_on_items_and_tokens(service, assistant):
    write_prefs(assistant)
    service.settings = service.settings.model_copy(update={"ambient": service.settings.ambient.model_copy(update={"max_items": 2})})
    profile = service.ambient_profile("assistant", "alice")
    assert len(profile.items) == 2
    assert sum("item bound" in e["reason"] for e in profile.excluded) == 3
    service.settings = service.settings.model_copy(update={"ambient": service.settings.ambient.model_copy(
        update={"max_items": 50, "max_tokens": 60})})
    profile = service.ambient_profile("assistant", "alice")
    assert 0 < len(profile.items) < len(PREFS)
    assert profile.tokens == count_tokens(profile.text) <= 60
    assert any("token bound" in e["reason"] for e in profile.excluded)
    service.settings = service.settings.model_copy(update={"ambient": service.settings.ambient.model_copy(update={"max_tokens": 20})})
    assert service.ambient_profile("assistant", "alice").text is None  # the header alone does not fit: nothing


def test_the_profile_is_fixed_for_the_session_while_records_change(service, assistant):
    ids = write_prefs(assistant)
    rt = runtime(service)
    session = open_as(rt, "s1")
    before = rt.prefix(session)
    # the user changes their mind, a new preference arrives, one is forgotten
    assistant.record_turn("user", "Actually, answer me in German from now on.")
    revised = assistant.call_tool("memory_revise", {"action": "update", "record_id": ids[0], "content": "The user wants answers in German.",
                                                    "reason": "changed their mind", "source_kind": "user_statement",
                                                    "evidence": "answer me in German from now on"})
    assert revised["ok"], revised
    said(assistant, "I like a dark tone in replies.", "The user likes a dark tone in replies.", "tone")
    assert rt.prefix(session) == before
    assert rt.prefix(open_as(rt, "s1")) == before
    # forgetting is the one change that reaches a started session: the line is erased
    assert assistant.call_tool("memory_forget", {"record_id": ids[4], "reason": "test"})["ok"]
    before = before.replace("- The user wants metric units.", "- [forgotten]")
    assert rt.prefix(session) == before
    # another process resuming the session reads the recorded profile, it does not assemble again
    other = runtime(service)
    assert other.prefix(open_as(other, "s1")) == before
    # a new session gets the profile as it is now
    fresh = rt.prefix(open_as(rt, "s2"))
    assert fresh != before and "German" in fresh and "French" not in fresh and "dark tone" in fresh
    assert "metric" not in fresh


def test_inferences_conditional_facts_and_untrusted_records(service, assistant):
    inferred(assistant, "The user probably prefers answers in Spanish.", "language")
    said(assistant, "I'm flying to Lisbon on 3 July.", "The user is flying to Lisbon on 3 July.", "trip")
    said(assistant, "I was diagnosed with asthma.", "The user has asthma.", "diagnosis")
    said(assistant, "Until July keep answers short please.", "The user wants short answers until July.", "answer_style",
         valid_until="2026-07-01")
    tool_id = from_tool(assistant, "units: imperial", "The user wants imperial units.", "units")
    profile = service.ambient_profile("assistant", "alice")
    assert profile.items == []
    assert [e["record_id"] for e in profile.excluded] == [tool_id]  # the candidate is listed, not used
    candidates = service.ambient_candidates()
    assert [r.id for r, _ in candidates] == [tool_id]
    service.decide_ambient(tool_id, "approved", actor="ui:rita", reason="checked with the user")
    assert [i.record_id for i in service.ambient_profile("assistant", "alice").items] == [tool_id]
    assert service.ambient_candidates() == []
    assert service.events_for(tool_id)[-1]["kind"] == "ambient.approved"


def test_decisions_that_do_not_apply_are_refused_and_write_nothing(service, assistant):
    trusted = said(assistant, *PREFS[0])
    trip = said(assistant, "I'm flying to Lisbon on 3 July.", "The user is flying to Lisbon on 3 July.", "trip")
    inference = inferred(assistant, "The user probably prefers answers in Spanish.", "language")
    for record_id, decision in ((trusted, "approved"), (trusted, "restored"), (trip, "approved"), (inference, "approved"),
                                (trip, "removed")):
        with pytest.raises(PolicyError):
            service.decide_ambient(record_id, decision, actor="ui:rita", reason="x")
    with pytest.raises(InvalidInputError):
        service.decide_ambient(trusted, "promote", actor="ui:rita")
    with pytest.raises(InvalidInputError):
        service.decide_ambient(trusted, "refused", actor="ui:rita", reason="x" * 1001)
    with pytest.raises(InvalidInputError):
        service.decide_ambient(trusted, "refused", actor="ui:rita", reason="bad \ud800")
    with pytest.raises(NotFoundError):
        service.decide_ambient("mem_nope", "refused", actor="ui:rita")
    with pytest.raises(PolicyError):  # not bob's record
        service.decide_ambient(trusted, "removed", actor="ui:bob", user_id="bob")
    assert service.store.scalar("SELECT COUNT(*) FROM ambient_decisions") == 0


def test_a_users_removal_holds_for_future_sessions_only(service, assistant):
    ids = write_prefs(assistant)
    rt = runtime(service)
    started = rt.prefix(open_as(rt, "before"))
    status = service.decide_ambient(ids[3], "removed", actor="ui:alice", reason="not any more", user_id="alice")
    assert status.state == "removed"
    assert rt.prefix(open_as(rt, "before")) == started  # the started session keeps what it recorded
    after = rt.prefix(open_as(rt, "after"))
    assert "concise" in started and "concise" not in after
    # a new version of the removed lineage stays out too
    assistant.record_turn("user", "I prefer concise answers, bullet points only.")
    assert assistant.call_tool("memory_revise", {"action": "update", "record_id": ids[3], "reason": "refined",
                                                 "content": "The user prefers concise answers in bullet points.",
                                                 "source_kind": "user_statement",
                                                 "evidence": "I prefer concise answers, bullet points only."})["ok"]
    assert "bullet" not in (service.ambient_profile("assistant", "alice").text or "")
    current = service.store.scalar("SELECT id FROM records WHERE lineage_id = (SELECT lineage_id FROM records WHERE id = ?) "
                                   "AND status = 'confirmed'", (ids[3],))
    service.decide_ambient(current, "restored", actor="ui:alice", reason="undo", user_id="alice")
    assert "bullet" in service.ambient_profile("assistant", "alice").text
    assert [d["decision"] for d in service.ambient_history(current)] == ["removed", "restored"]


def test_scope_isolation_two_users_and_a_shared_project(service):
    for scope in ("user:alice", "user:bob", "project:apollo"):
        service.grant("assistant", scope, read=True, write=True, actor="test")
    alice = service.start_session(agent_id="assistant", user_id="alice", project_id="apollo", session_id="wa")
    bob = service.start_session(agent_id="assistant", user_id="bob", project_id="apollo", session_id="wb")
    said(alice, "Please answer me in French.", "The user wants answers in French.", "language")
    said(bob, "Use imperial units with me.", "The user wants imperial units.", "units")
    said(bob, "Keep answers formal in this project.", "Answers in this project are formal.", "answer_style",
         target="current_project", about="apollo", about_kind="project")
    rt = runtime(service)
    a = service.session_context(open_as(rt, "sa", project="apollo").id)
    b = service.session_context(open_as(rt, "sb", user="bob", project="apollo").id)
    assert [i["text"] for i in a["profile_items"]] == ["The user wants answers in French."]
    assert [i["text"] for i in b["profile_items"]] == ["The user wants imperial units."]
    assert all(i["scope"] == "user:bob" for i in b["profile_items"])
    # an agent without a grant on the user's scope gets no profile for them
    service.revoke("assistant", "user:alice", actor="test")
    assert service.ambient_profile("assistant", "alice").items == []


def test_two_stores_differing_only_in_what_alice_cannot_read(tmp_path, clock, settings):
    from memory_core import MemoryService
    from tests.fakes import HashingEmbedder

    texts = []
    for name, extra in (("one", False), ("two", True)):
        svc = MemoryService.open(tmp_path / f"{name}.sqlite", settings, clock=clock, embedder=HashingEmbedder())
        svc.grant("assistant", "user:alice", read=True, write=True, actor="test")
        svc.grant("assistant", "user:bob", read=True, write=True, actor="test")
        said(svc.start_session(agent_id="assistant", user_id="alice", session_id="w"), *PREFS[3])
        if extra:
            bob = svc.start_session(agent_id="assistant", user_id="bob", session_id="wb")
            for words, content, attribute in PREFS:
                said(bob, words, content.replace("The user", "Bob"), attribute)
        profile = svc.ambient_profile("assistant", "alice")
        texts.append((profile.text, [(i.text, i.version, i.scope, i.basis) for i in profile.items], profile.excluded))
        svc.close()
    assert texts[0] == texts[1]


def test_forgetting_a_record_erases_its_text_from_recorded_profiles(service, assistant):
    ids = write_prefs(assistant)
    rt = runtime(service)
    open_as(rt, "s1")
    service.record_model_view("s1", system_text="You help.\n\n" + service.session_context("s1")["profile_text"], offered_tools=[])
    service.forget(ids[2], actor="user:alice", reason="private")
    recorded = service.session_context("s1")
    assert "screen reader" not in recorded["profile_text"] and "screen reader" not in recorded["system_text"]
    assert "[forgotten]" in recorded["profile_text"]
    item = next(i for i in recorded["profile_items"] if i["record_id"] == ids[2])
    assert item["text"] == "[forgotten]"
    assert "concise" in recorded["profile_text"]  # the other items stay


def test_a_profile_shows_itself_in_jupyter_with_its_text_escaped(service, assistant):
    said(assistant, "Answer in <b>bold</b> French.", "The user wants answers in <b>French</b>.", "language")
    profile = service.ambient_profile("assistant", "alice")
    html = profile._repr_html_()
    assert "&lt;b&gt;French&lt;/b&gt;" in html and "<b>French" not in html
    frame = profile.to_dataframe()
    assert list(frame["text"]) == ["The user wants answers in <b>French</b>."]
