"""The new full-text views render untrusted text literally, and permalinks open what they name."""

from tests.ui.conftest import service_for, shown_text
from tests.ui.store_builder import INJECTION


def _markup_free(at) -> None:
    for body in [m.value for m in at.markdown] + [c.value for c in at.caption]:
        assert "<img" not in body and "](javascript" not in body


def test_a_session_permalink_shows_each_turn_literally(open_page):
    at = open_page("extraction.py", "viewer")
    service = service_for(at)
    session = service.start_session(agent_id="assistant", user_id="alice", session_id="ses_hostile")
    session.record_turn("user", INJECTION)
    session.record_turn("assistant", "a--b -- x -> y")
    at.query_params["session"] = "ses_hostile"
    at.run()
    assert not at.exception
    codes = [c.value for c in at.code]
    assert INJECTION in codes and "a--b -- x -> y" in codes
    _markup_free(at)


def test_a_record_permalink_opens_the_record_and_a_user_cannot_open_anothers(open_page, ui_store):
    _, ids = ui_store
    at = open_page("records.py", "viewer")
    at.query_params["record"] = ids["injection"]
    at.run()
    assert INJECTION in [c.value for c in at.code]
    _markup_free(at)

    bob = open_page("records.py", "user")
    bob.session_state["identity"] = __import__("admin_ui.auth", fromlist=["Identity"]).Identity("bob", "user", user_id="bob")
    bob.query_params["record"] = ids["injection"]
    bob.run()
    assert INJECTION not in [c.value for c in bob.code]
    assert any(f"No record {ids['injection']} that you can see." in t for t in shown_text(bob))


def test_stage_outputs_and_dropped_candidates_carry_their_content(open_page, ui_store):
    _, ids = ui_store
    at = open_page("search_explorer.py", "viewer")
    at.selectbox(key="explorer_agent").set_value("assistant")
    at.selectbox(key="explorer_user").set_value("alice")
    at.text_input(key="explorer_query").input("img onerror alert bold link")
    at.button(key="explorer_run").click().run()
    response = at.session_state["explorer_response"]
    dropped_at = [n for n, s in enumerate(response.trace.stages, 1) if any(d.get("id") == ids["injection"] for d in s.dropped)]
    shown_at = [n for n, s in enumerate(response.trace.stages, 1)
                if ids["injection"] in str(s.outputs)]
    target = (dropped_at or shown_at)[0]
    at.number_input(key="explorer_stage").set_value(target).run()
    assert not at.exception
    assert INJECTION in [c.value for c in at.code] or any(INJECTION in str(j.value) for j in at.json)
    _markup_free(at)


def test_a_logged_search_can_be_edited_and_rerun(open_page):
    at = open_page("search_explorer.py", "operator")
    at.selectbox(key="explorer_agent").set_value("assistant")
    at.selectbox(key="explorer_user").set_value("alice")
    at.text_input(key="explorer_query").input("Lisbon offsite")
    at.button(key="explorer_run").click().run()
    first = at.session_state["explorer_response"]
    at.text_input(key="explorer_query").input("something else entirely")
    at.button(key="explorer_edit").click().run()
    assert at.text_input(key="explorer_query").value == "Lisbon offsite"
    assert at.selectbox(key="explorer_agent").value == "assistant"
    assert first.search_id
