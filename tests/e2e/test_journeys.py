"""End-to-end journeys in headless Chromium against a real `streamlit run` over the demo store.

Each test starts a fresh browser session (so the localhost demo operator is signed in), switches
account where the journey needs another role, works only through the UI, and checks the outcome
in the UI and, where the UI's word is not enough, in the store file itself.
"""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.e2e.app_utils import (
    alerts, check, click, eventually, fill, goto, key, nav, select, sign_in, sign_in_as, sign_out, table_text, wait_for_app,
)

pytestmark = pytest.mark.e2e

PASSWORDS = {name: f"{name}-demo-2026" for name in ("viewer", "reviewer", "operator", "admin", "alice")}


def handles(store) -> dict[str, str]:
    with sqlite3.connect(store) as conn:
        return json.loads(conn.execute("SELECT value FROM store_meta WHERE key = 'demo_handles'").fetchone()[0])


def db_row(store, sql, params=()):
    with sqlite3.connect(store) as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute(sql, params).fetchone()


def search(page, agent: str, user: str, query: str) -> None:
    select(page, "explorer_agent", agent)
    select(page, "explorer_user", user)
    fill(page, "explorer_query", query, submit=False)
    click(page, "explorer_run")


def result_ids(page) -> str:
    """The returned records as the results table shows them ('' for an empty answer)."""
    page.get_by_role("tab", name="Results").click()
    return table_text(page, "explorer_results")


def test_sign_in(app_server, page):
    base, _ = app_server
    goto(page, base)
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_text("Demo operator · operator")).to_be_visible()
    sign_out(page)
    sign_in(page, "viewer", "wrong password")
    expect(page.get_by_text("Unknown username or wrong password.")).to_be_visible()
    sign_in(page, "viewer", PASSWORDS["viewer"])
    expect(sidebar.get_by_text(re.compile("· viewer"))).to_be_visible()
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()


def test_a_user_sees_what_is_remembered_and_forgets_a_record(app_server, page):
    base, store = app_server
    target = handles(store)["alice_morning_meetings"]
    sign_in_as(page, base, "alice", PASSWORDS["alice"])
    expect(page.get_by_role("heading", name="My memory")).to_be_visible()
    assert eventually(page, lambda: target in table_text(page, "records_table"))
    shown = table_text(page, "records_table")
    assert "user:bob" not in shown and "project:atlas" not in shown
    select(page, "records_selected", target)
    expect(page.locator('[data-testid="stCode"]').filter(has_text="Alice seems to prefer morning meetings.")).to_be_visible()
    page.get_by_text("Forget this record").click()
    fill(page, "records_detail_forget_reason", "I never said that", submit=False)
    check(page, "records_detail_forget_confirm")
    click(page, "records_detail_forget_submit")
    expect(page.get_by_text(re.compile(f"Forgot 1 record version.*{target}"))).to_be_visible()
    assert eventually(page, lambda: target not in table_text(page, "records_table"))
    fill(page, "records_text", target)
    expect(page.get_by_text("No record matches these filters.")).to_be_visible()

    # Nowhere else either: the assistant's search no longer finds it, and the store holds no text.
    sign_out(page)
    sign_in(page, "operator", PASSWORDS["operator"])
    nav(page, "Search explorer")
    search(page, "assistant", "alice", "Does Alice prefer morning meetings?")
    assert eventually(page, lambda: "mem_" in result_ids(page) or key(page, "explorer_empty_reason").count() > 0)
    assert target not in result_ids(page)
    row = db_row(store, "SELECT status, content, evidence FROM records WHERE id = ?", (target,))
    assert (row["status"], row["content"], row["evidence"]) == ("deleted", "", None)
    event = db_row(store, "SELECT actor, reason FROM events WHERE kind = 'record.forgotten' AND record_id = ?", (target,))
    assert (event["actor"], event["reason"]) == ("ui:alice", "I never said that")


def test_an_operator_previews_and_approves_an_entity_merge(app_server, page):
    base, store = app_server
    launch = handles(store)["atlas_launch_date"]
    goto(page, base)
    nav(page, "Entities")
    select(page, "entities_proposal", "Atlas project → Project Atlas")
    expect(page.get_by_text("1 record link(s) move to the target")).to_be_visible()
    assert eventually(page, lambda: launch in table_text(page, "merge_relinked"))
    fill(page, "merge_reason", "one project, two names", submit=False)
    check(page, "merge_confirm")
    click(page, "merge_submit")
    expect(page.get_by_text(re.compile("Merged ent_.* into ent_"))).to_be_visible()
    target = db_row(store, "SELECT id FROM entities WHERE canonical_name = 'Project Atlas' AND scope_kind = 'project'")["id"]
    fill(page, "entities_text", "Project Atlas")
    select(page, "entities_selected", target)
    assert eventually(page, lambda: launch in table_text(page, "entity_records_table"))
    link = db_row(store, "SELECT entity_id FROM record_entities WHERE record_id = ? AND role = 'subject'", (launch,))
    assert link["entity_id"] == target


def test_a_reviewer_clears_a_review_flag_and_confirms_a_provisional_record(app_server, page):
    base, store = app_server
    ids = handles(store)
    holiday, slides = ids["org_spring_holiday"], ids["carol_report_format_guess"]
    sign_in_as(page, base, "reviewer", PASSWORDS["reviewer"])
    nav(page, "Review queue")
    key(page, "review_queue").get_by_text("Review due").click()
    wait_for_app(page)
    select(page, "review_selected", holiday)
    assert eventually(page, lambda: "review date" in table_text(page, "review_validity"))
    fill(page, "review_clear_reason", "the holiday is in the past; nothing to change", submit=False)
    click(page, "review_clear_submit")
    expect(page.get_by_text(f"Cleared the review flag on {holiday}")).to_be_visible()

    key(page, "review_queue").get_by_text("Provisional records").click()
    wait_for_app(page)
    select(page, "review_selected", slides)
    fill(page, "review_confirm_reason", "Carol asked for slides in the kickoff", submit=False)
    click(page, "review_confirm_submit")
    expect(page.get_by_text(f"Confirmed {slides}")).to_be_visible()
    assert db_row(store, "SELECT review_flagged_at FROM records WHERE id = ?", (holiday,))["review_flagged_at"] is None
    assert db_row(store, "SELECT status FROM records WHERE id = ?", (slides,))["status"] == "confirmed"
    actors = {r for (r,) in sqlite3.connect(store).execute(
        "SELECT actor FROM events WHERE record_id IN (?, ?) AND kind IN ('record.review_cleared', 'record.promoted')", (holiday, slides))}
    assert actors == {"ui:reviewer"}


def test_an_engineer_debugs_an_empty_search(app_server, page):
    base, store = app_server
    lisbon = handles(store)["alice_lisbon_trip"]
    sign_in_as(page, base, "viewer", PASSWORDS["viewer"])
    nav(page, "Search explorer")
    search(page, "assistant", "alice", "banana bread recipe with walnuts")
    reason = key(page, "explorer_empty_reason")
    expect(reason.get_by_text("No memory returned")).to_be_visible()
    expect(reason.get_by_text(re.compile("No memory returned: .*floor"))).to_be_visible()
    page.get_by_role("tab", name="Stages").click()
    # Each click reruns the app; wait for the panel to show the stage it should, never for a time.
    panel = key(page, "explorer_stage_panel").locator('[data-testid="stText"]').first
    for number, name in enumerate(["rewrite", "scope_resolution", "hard_filter", "time_window", "query_embedding"], 1):
        expect(panel).to_contain_text(re.compile(rf"^Stage {number} of \d+: {name} · "))
        click(page, "explorer_next")
    expect(panel).to_contain_text(re.compile(r"^Stage 6 of \d+: "))
    search(page, "assistant", "alice", "Lisbon trip dates")
    expect(page.get_by_text(re.compile(r"\d+ result\(s\)"))).to_be_visible()
    assert eventually(page, lambda: lisbon in result_ids(page))


def test_an_operator_grants_a_scope_and_the_same_search_returns_the_record(app_server, page):
    base, store = app_server
    lisbon = handles(store)["alice_lisbon_trip"]
    query = "When is Alice travelling to Lisbon?"
    goto(page, base)
    nav(page, "Search explorer")
    search(page, "scheduler", "alice", query)
    expect(key(page, "explorer_empty_reason").get_by_text("No memory returned")).to_be_visible()

    nav(page, "Grants")
    fill(page, "grant_add_agent", "scheduler", submit=False)
    fill(page, "grant_add_scope", "user:alice", submit=False)
    fill(page, "grant_add_reason", "Alice connected her calendar", submit=False)
    click(page, "grant_add_submit")
    expect(page.get_by_text("Granted scheduler read on user:alice")).to_be_visible()

    nav(page, "Search explorer")
    search(page, "scheduler", "alice", query)
    assert eventually(page, lambda: lisbon in result_ids(page))


def test_a_viewer_cannot_mutate_anything(app_server, page):
    base, store = app_server
    ids = handles(store)
    sign_in_as(page, base, "viewer", PASSWORDS["viewer"])
    forbidden = ["records_detail_forget_submit", "review_confirm_submit", "review_reject_submit", "review_edit_submit",
                 "review_clear_submit", "review_bulk_submit", "grant_add_submit", "grant_revoke_submit", "merge_submit",
                 "extraction_trigger", "extraction_upload_run", "extraction_retry", "overview_reembed"]

    def assert_no_actions():
        for name in forbidden:
            assert key(page, name).count() == 0, name

    nav(page, "Records")
    select(page, "records_selected", ids["alice_answer_style_v3"])
    assert page.get_by_text("Forget this record").count() == 0
    assert_no_actions()
    nav(page, "Review queue")
    select(page, "review_selected", ids["bob_editor_vscode_guess"])
    expect(page.get_by_text(re.compile(r"Your role \(viewer\) cannot decide on records")).first).to_be_visible()
    assert_no_actions()
    nav(page, "Grants")
    expect(page.get_by_text(re.compile(r"cannot change grants"))).to_be_visible()
    nav(page, "Entities")
    select(page, "entities_proposal", "Atlas")
    expect(page.get_by_text(re.compile("cannot approve merges"))).to_be_visible()
    assert_no_actions()
    for title in ("Extraction", "Overview", "Logs"):
        nav(page, title)
        assert_no_actions()
    assert page.locator('[data-testid="stSidebar"]').get_by_text(re.compile("· viewer")).count() == 1
    assert not [a for a in alerts(page) if "Traceback" in a]
