"""Records page: filters, the full envelope, historical markers, user scoping, forgetting, injection."""

from tests.ui.conftest import frames_with, service_for, shown_text
from tests.ui.store_builder import INJECTION


def records_table(at):
    return frames_with(at, "id", "content", "marker")[0]


def test_staff_see_every_record_and_historical_ones_are_marked(open_page, ui_store):
    _, ids = ui_store
    at = open_page("records.py", "viewer")
    frame = records_table(at)
    assert {ids["concise"], ids["detailed"], ids["bob_sam"], ids["atlas1"]} <= set(frame["id"])
    assert frame.set_index("id").loc[ids["concise"], "marker"] == "historical"


def test_filters_narrow_the_list(open_page, ui_store):
    _, ids = ui_store
    at = open_page("records.py", "viewer")
    at.selectbox(key="records_scope").select("user:bob").run()
    assert set(records_table(at)["id"]) == {ids["bob_sam"]}
    at.selectbox(key="records_scope").select("(any)")
    at.multiselect(key="records_statuses").select("provisional").run()
    assert set(records_table(at)["status"]) == {"provisional"}
    at.text_input(key="records_text").input("no such words anywhere").run()
    assert any("No record matches" in t for t in shown_text(at))


def test_a_record_opens_with_evidence_lineage_and_history(open_page, ui_store):
    _, ids = ui_store
    at = open_page("records.py", "viewer")
    at.selectbox(key="records_selected").select(ids["concise"]).run()
    texts = shown_text(at)
    assert "The user prefers concise answers." in texts
    assert "Please keep answers concise." in texts  # the evidence quote
    assert any("superseded" in t.lower() for t in texts)
    lineage = frames_with(at, "version", "supersedes")[0]
    assert list(lineage["id"]) == [ids["concise"], ids["detailed"]]
    # the transcript turns around the evidence, each in full as text, the evidence turn marked
    assert any(t.startswith("turn ") and "◀ the evidence" in t for t in texts)
    events = frames_with(at, "kind", "actor")[0]
    assert {"record.created", "record.superseded"} <= set(events["kind"])


def test_memory_content_renders_literally(open_page, ui_store):
    _, ids = ui_store
    at = open_page("records.py", "admin")
    at.selectbox(key="records_selected").select(ids["injection"]).run()
    assert INJECTION in [c.value for c in at.code]
    for body in [m.value for m in at.markdown] + [c.value for c in at.caption]:
        assert "<img" not in body and "](javascript" not in body


def test_a_user_sees_only_scopes_they_own(open_page, ui_store):
    _, ids = ui_store
    at = open_page("records.py", "user")
    assert at.title[0].value == "My memory"
    scopes = set(records_table(at)["scope"])
    assert scopes == {"user:alice"}
    assert ids["bob_sam"] not in set(records_table(at)["id"])
    assert "project:atlas" not in at.selectbox(key="records_scope").options


def test_a_user_forgets_their_own_record_with_a_reason(open_page, ui_store):
    _, ids = ui_store
    at = open_page("records.py", "user")
    at.selectbox(key="records_selected").select(ids["guess"]).run()
    # Before confirming, the form lists every place the record will be erased from.
    assert any("This will erase:" in t.value and ids["guess"] in t.value for t in at.text)
    at.button(key="records_detail_forget_submit").click().run()
    assert any("Give a reason" in e.value for e in at.error)
    at.text_input(key="records_detail_forget_reason").input("I never said that")
    at.checkbox(key="records_detail_forget_confirm").check()
    at.button(key="records_detail_forget_submit").click().run()
    assert not at.exception
    assert ids["guess"] not in set(records_table(at)["id"])
    service = service_for(at)
    assert service.record(ids["guess"]).status == "deleted"
    event = service.events_for(ids["guess"])[-1]
    assert (event["kind"], event["actor"], event["reason"]) == ("record.forgotten", "ui:alice", "I never said that")


def test_a_viewer_gets_no_forget_form(open_page, ui_store):
    _, ids = ui_store
    at = open_page("records.py", "viewer")
    at.selectbox(key="records_selected").select(ids["guess"]).run()
    assert not [b for b in at.button if b.key == "records_detail_forget_submit"]


def test_a_user_downloads_their_own_memory_and_an_operator_any_scope(open_page, ui_store):
    import json

    _path, ids = ui_store
    at = open_page("records.py", "user")
    at.button(key="download_prepare").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    made = at.session_state["download_file"]
    lines = [json.loads(line) for line in made.data.decode().splitlines()]
    scopes = {line["record"]["scope"] for line in lines if line["kind"] == "record"}
    assert scopes and all(s == "user:alice" or s.endswith("/alice") for s in scopes), scopes
    assert ids["bob_sam"] not in made.data.decode()
    assert [k for k in ("download_scopes", "download_sessions") if k in at.session_state] == []  # a user picks nothing

    at = open_page("records.py", "operator")
    at.multiselect(key="download_scopes").set_value(["user:bob"])
    at.button(key="download_prepare").click().run()
    assert not at.exception and not at.error
    made = at.session_state["download_file"]
    assert ids["bob_sam"] in made.data.decode() and made.scopes == ("user:bob",)
