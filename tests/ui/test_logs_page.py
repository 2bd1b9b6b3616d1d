"""Logs page: search, write and event logs, filters, one entry in full."""

from tests.ui.conftest import frames_with, service_for


def test_the_event_log_filters_by_kind_and_opens_an_entry(open_page):
    at = open_page("logs.py", "viewer")
    at.segmented_control(key="logs_kind").set_value("event").run()
    at.selectbox(key="logs_event_kind").select("grant.added").run()
    frame = frames_with(at, "kind", "actor", "reason")[0]
    assert set(frame["kind"]) == {"grant.added"} and len(frame) == 3
    at.selectbox(key="logs_event_selected").select(int(frame["seq"][0])).run()
    assert any(j.value for j in at.json)


def test_the_write_log_lists_writes(open_page, ui_store):
    _, ids = ui_store
    at = open_page("logs.py", "viewer")
    at.segmented_control(key="logs_kind").set_value("write").run()
    at.text_input(key="logs_write_record").input(ids["detailed"]).run()
    frame = frames_with(at, "operation", "outcome")[0]
    assert list(frame["record_id"]) == [ids["detailed"]]


def test_a_logged_search_opens_in_the_explorer(open_page):
    at = open_page("logs.py", "operator")
    service = service_for(at)
    response = service.search(agent_id="assistant", user_id="alice", query="Lisbon offsite")
    at.run()
    frame = frames_with(at, "raw_query", "results")[0]
    assert response.search_id in set(frame["id"])
    at.selectbox(key="logs_search_selected").select(int(frame["seq"][0])).run()
    at.button(key="logs_open_in_explorer").click().run()
    assert not at.exception
    assert at.title[0].value == "Search explorer"
    assert at.session_state["explorer_response"].search_id == response.search_id


def test_an_empty_filter_result_says_so(open_page):
    at = open_page("logs.py", "viewer")
    at.text_input(key="logs_search_text").input("nothing like this").run()
    assert any("No entries match" in i.value for i in at.info)
