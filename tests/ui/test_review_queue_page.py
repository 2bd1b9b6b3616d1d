"""Review queue: confirm, reject, edit provisional records; clear review_due flags; bulk actions."""

from tests.ui.conftest import frames_with, service_for, shown_text


def queue_ids(at):
    frames = frames_with(at, "id", "content", "marker")
    return set(frames[0]["id"]) if frames else set()


def test_a_reviewer_confirms_a_provisional_record(open_page, ui_store):
    _, ids = ui_store
    at = open_page("review_queue.py", "reviewer")
    assert ids["guess"] in queue_ids(at)
    at.selectbox(key="review_selected").select(ids["guess"]).run()
    at.text_input(key="review_confirm_reason").input("Alice confirmed it in chat")
    at.button(key="review_confirm_submit").click().run()
    assert not at.exception
    assert ids["guess"] not in queue_ids(at)
    service = service_for(at)
    assert service.record(ids["guess"]).status == "confirmed"
    event = service.events_for(ids["guess"])[-1]
    assert (event["kind"], event["actor"]) == ("record.promoted", "ui:rita")


def test_a_reviewer_edits_a_provisional_record_into_a_new_version(open_page, ui_store):
    _, ids = ui_store
    at = open_page("review_queue.py", "reviewer")
    at.selectbox(key="review_selected").select(ids["atlas1"]).run()
    at.text_area(key=f"review_edit_content_{ids['atlas1']}").input("Project Atlas ships in early April.")
    at.text_input(key="review_edit_reason").input("narrower date")
    at.button(key="review_edit_submit").click().run()
    assert not at.exception
    service = service_for(at)
    old = service.record(ids["atlas1"])
    assert old.status == "superseded"
    assert service.record(old.superseded_by_id).content == "Project Atlas ships in early April."


def test_a_reviewer_clears_a_review_due_flag_seeing_its_reason_and_bounds(open_page, ui_store):
    _, ids = ui_store
    at = open_page("review_queue.py", "reviewer")
    at.segmented_control(key="review_queue").set_value("review_due").run()
    assert queue_ids(at) == {ids["trip"]}
    at.selectbox(key="review_selected").select(ids["trip"]).run()
    bounds = frames_with(at, "flag reason", "valid_until")[0]
    assert "review date 2026-03-03 has arrived" in bounds["flag reason"][0]
    assert str(bounds["valid_until"][0]).startswith("2026-03-03")  # shown as a date, not an ISO string
    at.text_input(key="review_clear_reason").input("the trip happened as planned")
    at.button(key="review_clear_submit").click().run()
    assert not at.exception
    assert service_for(at).record(ids["trip"]).review_flagged_at is None
    assert any("Nothing waits" in t for t in shown_text(at))


def test_bulk_reject_needs_confirmation_then_forgets_every_selected_record(open_page, ui_store):
    _, ids = ui_store
    at = open_page("review_queue.py", "operator")
    chosen = [ids["injection"], ids["atlas2"]]
    at.multiselect(key="review_bulk_ids").set_value(chosen)
    at.selectbox(key="review_bulk_action").select("forget")
    at.text_input(key="review_bulk_reason").input("junk inferences")
    at.button(key="review_bulk_submit").click().run()
    assert any("confirmation" in e.value for e in at.error)
    assert service_for(at).record(ids["atlas2"]).status == "provisional"
    at.checkbox(key="review_bulk_confirm").check()
    at.button(key="review_bulk_submit").click().run()
    assert not at.exception
    service = service_for(at)
    assert {service.record(i).status for i in chosen} == {"deleted"}
    assert not set(chosen) & queue_ids(at)


def test_a_viewer_sees_the_queue_but_cannot_decide(open_page, ui_store):
    _, ids = ui_store
    at = open_page("review_queue.py", "viewer")
    at.selectbox(key="review_selected").select(ids["guess"]).run()
    keys = {b.key for b in at.button}
    assert not keys & {"review_confirm_submit", "review_reject_submit", "review_edit_submit", "review_bulk_submit"}
    assert any("read-only" in t for t in shown_text(at))
