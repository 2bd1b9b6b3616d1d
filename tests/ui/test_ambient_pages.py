"""The ambient profile page, the review queue's ambient tab and the session context view (AppTest)."""

from __future__ import annotations

import json

import pytest

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.adapters.base import MemoryRuntime
from memory_core.adapters.identity import Identity
from tests.fakes import HashingEmbedder
from tests.ui.conftest import frames_with, service_for, shown_text
from tests.ui.store_builder import NOW

MARKUP = "Answer in **French** <img src=x onerror=alert(1)> please"


def build_ambient_session(path, *, host_decision: bool) -> dict[str, str]:
    """An adapter-opened session with an ambient profile, a host search and a model search."""
    clock = FixedClock(NOW)
    out: dict[str, str] = {}
    with MemoryService.open(path, load_settings(), clock=clock, embedder=HashingEmbedder()) as service:
        writer = service.start_session(agent_id="assistant", user_id="alice", session_id="ses_prefs")
        writer.record_turn("user", MARKUP)
        out["markup"] = writer.call_tool("memory_write", {
            "type": "semantic", "content": MARKUP, "attribute": "language", "source_kind": "user_statement",
            "evidence": MARKUP})["record_id"]
        writer.record_turn("tool", "profile_lookup: units metric")
        out["units"] = writer.call_tool("memory_write", {
            "type": "semantic", "content": "The user wants metric units.", "attribute": "units",
            "source_kind": "tool_result", "evidence": "units metric"})["record_id"]
        writer.end()
        runtime = MemoryRuntime(service, framework="testhost", trigger_mode="hybrid", ambient=True)
        session = runtime.open(Identity(agent_id="assistant", user_id="alice", session_id="ses_ctx"))
        clock.advance(seconds=1)
        runtime.record_turn(session, "user", "Do you remember: detailed answers with examples?")
        clock.advance(seconds=1)
        host = runtime.host_search(session, "Do you remember: detailed answers with examples?")
        out["host_search"] = host["search_id"]
        runtime.note_model_call(session, "You are a helpful assistant.\n\n" + runtime.prefix(session),
                                lambda: [{"name": "memory_search", "description": "Search memory", "parameters": {}}])
        clock.advance(seconds=1)
        out["model_search"] = session.call_tool("memory_search", {"query": "answer style detailed"})["search_id"]
        clock.advance(seconds=1)
        runtime.record_turn(session, "assistant", "Detailed, with examples.")
        if host_decision:
            service.store.conn.execute(
                "INSERT INTO host_memory_decisions VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                ("hmd_1", "ses_ctx", 0, NOW, json.dumps(["preferred answer length"]), json.dumps([out["host_search"]]),
                 json.dumps([{"record_id": out["markup"], "version": 1, "score": 0.8, "admitted": True, "reason": "fills the gap"},
                             {"record_id": out["units"], "version": 1, "score": 0.2, "admitted": False, "reason": "unrelated"}]),
                 json.dumps([out["markup"]]), "offline-rules", "one strong agreeing signal", "HOST MESSAGE " + MARKUP))
    return out


@pytest.fixture
def ctx_store(ui_store):
    path, ids = ui_store
    return path, {**ids, **build_ambient_session(path, host_decision=False)}


@pytest.fixture
def ctx_store_with_decisions(ui_store):
    path, ids = ui_store
    return path, {**ids, **build_ambient_session(path, host_decision=True)}


def open_context(at, session_id):
    at.selectbox(key="context_session_id").set_value(session_id).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def page_links(at):
    return [el.proto for el in at.get("page_link")]


def test_the_context_view_shows_the_recorded_prefix_and_each_memory(open_page, ctx_store):
    _, ids = ctx_store
    at = open_context(open_page("session_context.py", "viewer"), "ses_ctx")
    recorded = service_for(at).session_context("ses_ctx")
    codes = [c.value for c in at.code]
    assert recorded["system_text"] in codes and recorded["policy"] in codes and recorded["profile_text"] in codes
    items = frames_with(at, "record", "why ambient")[0]
    assert ids["markup"] in set(items["record"]) and ids["detailed"] in set(items["record"])
    assert ids["units"] not in set(items["record"])  # a tool result waits for a reviewer
    assert frames_with(at, "name", "description")  # the tools offered
    text = shown_text(at)
    assert any("the host's search" in t and "received by the model" in t for t in text)
    assert any("the model's own memory_search" in t for t in text)
    assert any("Host decisions are shown with their candidates" in t for t in text)  # migration 95 made the table
    links = page_links(at)
    targets = [(link.page, link.query_string) for link in links]
    assert any(f"search={ids['host_search']}" in q for _, q in targets)
    assert any(f"search={ids['model_search']}" in q for _, q in targets)
    assert any(f"record={ids['markup']}" in q for _, q in targets)
    # memory text is text: the markup is shown literally in code, never rendered
    assert any(MARKUP in c for c in codes)
    for body in [m.value for m in at.markdown] + [c.value for c in at.caption]:
        assert "<img" not in body


def test_host_decisions_appear_with_their_candidates_and_message(open_page, ctx_store_with_decisions):
    _, ids = ctx_store_with_decisions
    at = open_context(open_page("session_context.py", "operator"), "ses_ctx")
    text = shown_text(at)
    assert any("host decision by offline-rules: 1 of 2 candidate(s) admitted" in t for t in text)
    assert "HOST MESSAGE " + MARKUP in [c.value for c in at.code]
    frame = next(f for f in frames_with(at, "record", "admitted") if ids["units"] in set(f["record"]))
    assert dict(zip(frame["record"], frame["admitted"])) == {ids["markup"]: True, ids["units"]: False}
    # the host search the decision used is shown with the decision, not twice
    assert not any("the host's search" in t for t in text)


def test_a_session_without_a_recorded_prefix_says_so(open_page, ctx_store):
    at = open_context(open_page("session_context.py", "viewer"), "ses_alice1")
    assert any("No prefix was recorded" in i.value for i in at.info)


def test_a_permalink_opens_a_session(open_page, ctx_store):
    from streamlit.testing.v1 import AppTest

    from tests.ui.conftest import APP, ROLES, page_file

    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state["identity"] = ROLES["viewer"]
    at.query_params["session"] = "ses_ctx"
    at.run()
    at.switch_page(page_file("session_context.py")).run()
    assert not at.exception
    assert at.selectbox(key="context_session_id").value == "ses_ctx"


def test_a_user_removes_an_item_and_puts_it_back(open_page, ctx_store):
    _, ids = ctx_store
    at = open_page("ambient_profile.py", "user")
    assert at.title[0].value == "My ambient profile"
    rows = frames_with(at, "record", "state")[0]
    states = dict(zip(rows["record"], rows["state"]))
    assert states[ids["detailed"]] == "in your profile" and states[ids["units"]] == "waiting for a reviewer"
    assert ids["trip"] not in states and ids["guess"] not in states and ids["bob_sam"] not in states
    at.selectbox(key="profile_remove_id").select(ids["detailed"])
    at.text_input(key="profile_remove_reason").input("I changed my mind")
    at.button(key="profile_remove_submit").click().run()
    assert any("confirmation" in e.value for e in at.error)  # not removed without the tick
    assert service_for(at).ambient_status(ids["detailed"]).state == "ambient"
    at.selectbox(key="profile_remove_id").select(ids["detailed"])
    at.checkbox(key="profile_remove_confirm").check()
    at.button(key="profile_remove_submit").click().run()
    assert not at.exception
    service = service_for(at)
    assert service.ambient_status(ids["detailed"]).state == "removed"
    assert ids["detailed"] not in [i.record_id for i in service.ambient_profile("assistant", "alice").items]
    assert service.session_context("ses_ctx")["profile_items"][0]["record_id"]  # started sessions keep theirs
    assert ids["detailed"] in [i["record_id"] for i in service.session_context("ses_ctx")["profile_items"]]
    at.selectbox(key="profile_restore_id").select(ids["detailed"])
    at.text_input(key="profile_restore_reason").input("mistake")
    at.button(key="profile_restore_submit").click().run()
    assert service.ambient_status(ids["detailed"]).state == "ambient"
    assert [d["actor"] for d in service.ambient_history(ids["detailed"])] == ["ui:alice", "ui:alice"]


def test_staff_see_a_profile_read_only(open_page, ctx_store):
    _, ids = ctx_store
    at = open_page("ambient_profile.py", "admin")
    at.selectbox(key="profile_user").set_value("alice").run()
    assert ids["detailed"] in set(frames_with(at, "record", "state")[0]["record"])
    assert not any(b.key == "profile_remove_submit" for b in at.button)
    assert any("cannot change another person's profile" in t for t in shown_text(at))


def test_a_reviewer_approves_an_ambient_candidate(open_page, ctx_store):
    _, ids = ctx_store
    at = open_page("review_queue.py", "reviewer")
    at.segmented_control(key="review_queue").set_value("ambient").run()
    assert ids["units"] in set(frames_with(at, "record", "source")[0]["record"])
    at.selectbox(key="ambient_review_selected").select(ids["units"]).run()
    at.text_input(key="ambient_review_reason").input("the user confirmed metric")
    at.button(key="ambient_review_submit").click().run()
    assert not at.exception
    service = service_for(at)
    assert service.ambient_status(ids["units"]).state == "ambient"
    assert service.events_for(ids["units"])[-1]["kind"] == "ambient.approved"
    assert ids["units"] in [i.record_id for i in service.ambient_profile("assistant", "alice").items]


def test_a_viewer_cannot_decide_on_candidates(open_page, ctx_store):
    _, ids = ctx_store
    at = open_page("review_queue.py", "viewer")
    at.segmented_control(key="review_queue").set_value("ambient").run()
    at.selectbox(key="ambient_review_selected").select(ids["units"]).run()
    assert not any(b.key == "ambient_review_submit" for b in at.button)
    assert any("cannot decide on ambient candidates" in t for t in shown_text(at))
