"""Issue 27 items 5-8 on the pages (AppTest): what is open after an action, the review date rule,
the order of a form's messages, a too-long reason, and a record's conflicts on the review form."""

import json

from tests.ui.conftest import errors, service_for, shown_text


def test_after_a_forget_no_record_stays_open_and_the_table_is_a_fresh_widget(open_page, ui_store):
    _, ids = ui_store
    at = open_page("records.py", "operator")
    at.selectbox(key="records_selected").select(ids["guess"]).run()
    assert any(t.value.startswith(f"{ids['guess']} · ") for t in at.text)
    at.text_input(key="records_detail_forget_reason").input("wrong guess")
    at.checkbox(key="records_detail_forget_confirm").check()
    at.button(key="records_detail_forget_submit").click().run()
    assert not at.exception
    assert at.selectbox(key="records_selected").value is None
    assert at.session_state["records_selected"] is None  # set, not just removed, so the browser is told
    assert not any(t.value.startswith(f"{ids['guess']} · ") for t in at.text)
    assert at.session_state["records_table__generation"] == 1  # a new table widget: no tick carried over
    assert service_for(at).record(ids["guess"]).status == "deleted"


def test_after_a_revise_the_new_version_opens_and_the_table_is_a_fresh_widget(open_page, ui_store):
    _, ids = ui_store
    at = open_page("records.py", "operator")
    at.selectbox(key="records_selected").select(ids["guess"]).run()
    at.toggle(key="records_detail_revise_open").set_value(True).run()
    content = next(a for a in at.text_area if a.key.startswith("records_detail_revise_content_"))
    content.input("Alice lives in Lisbon, since March.")
    at.text_input(key="records_detail_revise_reason").input("she told me the month")
    at.button(key="records_detail_revise_submit").click().run()
    assert not at.exception
    assert at.session_state["records_table__generation"] == 1  # the tick sat on the now-superseded row
    assert service_for(at).record(ids["guess"]).status == "superseded"
    new_id = at.query_params["record"][0] if isinstance(at.query_params["record"], list) else at.query_params["record"]
    assert new_id != ids["guess"]
    assert any(t.value.startswith(f"{new_id} · ") for t in at.text)  # the new version is what is open


def test_after_a_confirm_the_queue_opens_nothing(open_page, ui_store):
    _, ids = ui_store
    at = open_page("review_queue.py", "reviewer")
    at.selectbox(key="review_selected").select(ids["guess"]).run()
    at.text_input(key="review_confirm_reason").input("checked with Alice")
    at.button(key="review_confirm_submit").click().run()
    assert not at.exception
    assert at.selectbox(key="review_selected").value is None
    assert not [b for b in at.button if b.key == "review_confirm_submit"]
    assert at.session_state["review_table__generation"] == 1


def test_an_ambiguous_review_date_is_refused_beside_the_stated_rule(open_page, ui_store):
    _, ids = ui_store
    at = open_page("review_queue.py", "reviewer")
    at.segmented_control(key="review_queue").set_value("review_due").run()
    at.selectbox(key="review_selected").select(ids["trip"]).run()
    assert any("Dates in figures as YYYY-MM-DD" in t for t in shown_text(at))
    at.text_input(key="review_clear_next").input("05/06/2026").run()
    assert "could be 5 June 2026 or 6 May 2026" in errors(at)
    at.text_input(key="review_clear_reason").input("look again in June")
    at.button(key="review_clear_submit").click().run()
    assert "Fix the next review date first" in errors(at)
    assert service_for(at).record(ids["trip"]).review_flagged_at is not None


def test_the_empty_grant_form_names_the_agent_id_first(open_page):
    at = open_page("grants.py", "operator")
    at.button(key="grant_add_submit").click().run()
    shown = errors(at)
    assert shown.startswith("Give the agent id") and "Give a reason" not in shown


def test_a_too_long_reason_is_named_with_the_limit_and_changes_nothing(open_page):
    at = open_page("grants.py", "operator")
    before = service_for(at).grants()
    at.text_input(key="grant_add_agent").input("scheduler")
    at.text_input(key="grant_add_scope").input("user:alice")
    at.text_input(key="grant_add_reason").input("r" * 1200)
    at.button(key="grant_add_submit").click().run()
    assert "The reason is 1,200 characters long; the limit is 1,000" in errors(at)
    assert "Give a reason" not in errors(at)
    assert service_for(at).grants() == before


def test_the_revoke_form_asks_for_the_grant_before_the_reason(open_page):
    at = open_page("grants.py", "operator")
    at.button(key="grant_revoke_submit").click().run()
    assert errors(at).startswith("Choose a grant to revoke")


def test_a_review_form_shows_the_records_conflicts(open_page, ui_store):
    _, ids = ui_store
    at = open_page("review_queue.py", "reviewer")
    service = service_for(at)
    service.store.conn.execute("UPDATE records SET conflicts_with = ? WHERE id = ?", (json.dumps([ids["sam"]]), ids["guess"]))
    at.selectbox(key="review_selected").select(ids["guess"]).run()
    assert any("This record conflicts with 1 other record" in t for t in shown_text(at))
    conflicts = [d.value for d in at.dataframe if "id" in d.value.columns and ids["sam"] in set(d.value["id"])]
    assert conflicts and "Sam Lee reviews every pull request." in set(conflicts[0]["content"])
