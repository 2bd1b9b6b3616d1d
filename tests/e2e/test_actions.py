"""Issue 27, items 5-9: after every action the app shows a true picture.

One journey per item, in Chromium against a real ``streamlit run`` over the demo store (the demo
clock says Monday 20 April 2026, 09:00 UTC). Each failed on the code before its fix; they wait on
the text they expect, never on a pause, and read the store file where the UI's word is not enough.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.app_utils import (
    IDLE, check, click, eventually, fill, goto, key, nav, select, sign_in_as, table_text, wait_for_app,
)
from tests.e2e.test_browsing import click_row
from tests.e2e.test_journeys import PASSWORDS, db_row, handles

pytestmark = pytest.mark.e2e

# The app's one time format (admin_ui/views/timefmt.py): "20 Apr 2026, 09:00:00 UTC".
READABLE = r"\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d:\d\d UTC"
RAW_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")


def settled(page) -> None:
    """Wait for the run under way to end (after an action the flash shows first, above the old rest)."""
    page.wait_for_selector(IDLE, timeout=60_000)


def open_queue(page, name: str) -> None:
    key(page, "review_queue").get_by_text(name).click()
    wait_for_app(page)


def detail_header(page, detail_key: str) -> str:
    """The first line of the open record's view: ``<id> · <type> · version … · <status> · <scope>``."""
    header = page.locator('[data-testid="stText"]').filter(has_text=re.compile(r"^mem_\w+ · \w+ · version \d+ · "))
    if header.count() == 0:
        return ""
    return header.first.inner_text()


def picked_value(page, name: str) -> str:
    """What a selectbox shows (its label, then the chosen option or its placeholder)."""
    box = key(page, name)
    return box.inner_text() + " " + box.locator('[role="combobox"]').first.input_value()


def test_item5_after_a_forget_nothing_stays_open_and_the_next_click_opens_the_row_clicked(app_server, page):
    base, store = app_server
    goto(page, base)
    nav(page, "Records")
    click_row(page, "records_table", 0)
    first = detail_header(page, "records_detail").split(" · ")[0]
    assert first.startswith("mem_")
    content = db_row(store, "SELECT content FROM records WHERE id = ?", (first,))["content"]
    page.get_by_text("Forget this record").click()
    fill(page, "records_detail_forget_reason", "item 5: forget the first row", submit=False)
    check(page, "records_detail_forget_confirm")
    click(page, "records_detail_forget_submit")
    expect(page.get_by_text(re.compile(f"Forgot 1 record version.*{first}"))).to_be_visible()
    settled(page)
    # Nothing stays open on the tombstone, and its text is shown nowhere.
    assert detail_header(page, "records_detail") == ""
    assert first not in picked_value(page, "records_selected")
    assert page.get_by_text(content[:40]).count() == 0
    assert eventually(page, lambda: first not in table_text(page, "records_table"))
    # No tick is left on the row the next record moved into: clicking it opens that record.
    click_row(page, "records_table", 0)
    assert eventually(page, lambda: detail_header(page, "records_detail").startswith("mem_"))
    now_first = detail_header(page, "records_detail").split(" · ")[0]
    assert now_first != first
    assert now_first in picked_value(page, "records_selected")


def test_item5_after_a_review_decision_the_queue_opens_the_next_row_clicked(app_server, page):
    base, store = app_server
    sign_in_as(page, base, "reviewer", PASSWORDS["reviewer"])
    nav(page, "Review queue")
    open_queue(page, "Provisional records")
    # The second row: the oldest provisional record (Bob's editor) is left for the conflicts journey.
    click_row(page, "review_table", 1)
    expect(key(page, "review_confirm_submit")).to_be_visible()
    decided = re.search(r"mem_\w+", picked_value(page, "review_selected")).group(0)
    assert decided.startswith("mem_")
    fill(page, "review_confirm_reason", "item 5: confirmed from the first row", submit=False)
    click(page, "review_confirm_submit")
    expect(page.get_by_text(f"Confirmed {decided}")).to_be_visible()
    settled(page)
    assert key(page, "review_confirm_submit").count() == 0  # no decision form left open
    assert eventually(page, lambda: decided not in table_text(page, "review_table"))
    click_row(page, "review_table", 1)
    expect(key(page, "review_confirm_submit")).to_be_visible()
    following = re.search(r"mem_\w+", picked_value(page, "review_selected")).group(0)
    assert following != decided
    assert db_row(store, "SELECT status FROM records WHERE id = ?", (decided,))["status"] == "confirmed"


def test_item6_a_review_date_in_figures_follows_one_stated_rule(app_server, page):
    base, store = app_server
    holiday = handles(store)["org_spring_holiday"]
    sign_in_as(page, base, "reviewer", PASSWORDS["reviewer"])
    nav(page, "Review queue")
    open_queue(page, "Review due")
    select(page, "review_selected", holiday)
    expect(page.get_by_text(re.compile(r"Dates in figures as YYYY-MM-DD"))).to_be_visible()  # the rule, beside the box
    fill(page, "review_clear_next", "05/06/2026")
    expect(page.get_by_text(re.compile(r"could be 5 June 2026 or 6 May 2026"))).to_be_visible()
    fill(page, "review_clear_reason", "look again in the summer", submit=False)
    click(page, "review_clear_submit")
    expect(page.get_by_text("Fix the next review date first")).to_be_visible()
    fill(page, "review_clear_next", "31/03/2026")
    expect(page.get_by_text(re.compile(r"not in the YYYY-MM-DD form: type 2026-03-31"))).to_be_visible()
    fill(page, "review_clear_next", "2026-02-30")
    expect(page.get_by_text(re.compile(r"is not a real date"))).to_be_visible()
    row = db_row(store, "SELECT review_flagged_at, review_at FROM records WHERE id = ?", (holiday,))
    assert row["review_flagged_at"] is not None  # nothing was changed

    fill(page, "review_clear_next", "2026-06-05")
    expect(page.get_by_text(re.compile(r"Next review: 5 Jun 2026, 00:00:00 UTC"))).to_be_visible()
    fill(page, "review_clear_reason", "look again in June", submit=False)
    click(page, "review_clear_submit")
    expect(page.get_by_text(re.compile(f"Cleared the review flag on {holiday}; next review 5 Jun 2026"))).to_be_visible()
    row = db_row(store, "SELECT review_flagged_at, review_at FROM records WHERE id = ?", (holiday,))
    assert row["review_flagged_at"] is None and row["review_at"].startswith("2026-06-05T00:00:00")


def test_item7_forms_name_their_first_missing_field_and_a_too_long_reason(app_server, page):
    base, store = app_server
    goto(page, base)
    nav(page, "Grants")
    click(page, "grant_add_submit")
    expect(page.get_by_text("Give the agent id")).to_be_visible()
    assert page.get_by_text("Give a reason").count() == 0
    fill(page, "grant_add_agent", "scheduler", submit=False)
    click(page, "grant_add_submit")
    expect(page.get_by_text("Give the scope to grant")).to_be_visible()

    long_reason = ("Alice connected her calendar and asked for reminders. " * 30)[:1500]
    fill(page, "grant_add_agent", "scheduler", submit=False)
    fill(page, "grant_add_scope", "user:alice", submit=False)
    fill(page, "grant_add_reason", long_reason, submit=False)
    expect(key(page, "grant_add_reason").locator("input")).to_have_value(long_reason)  # the paste is kept
    click(page, "grant_add_submit")
    expect(page.get_by_text(re.compile(r"The reason is 1,500 characters long; the limit is 1,000"))).to_be_visible()
    assert db_row(store, "SELECT COUNT(*) AS n FROM grants WHERE agent_id = 'scheduler' AND scope_id = 'alice'")["n"] == 0


def test_item8_a_merge_is_found_in_the_event_log_and_the_record_history_and_reviews_show_conflicts(app_server, page):
    base, store = app_server
    ids = handles(store)
    launch = ids["atlas_launch_date"]
    goto(page, base)
    nav(page, "Entities")
    select(page, "entities_proposal", "Atlas project → Project Atlas")
    fill(page, "merge_reason", "one project, two names", submit=False)
    check(page, "merge_confirm")
    click(page, "merge_submit")
    expect(page.get_by_text(re.compile("Merged ent_.* into ent_"))).to_be_visible()

    nav(page, "Logs")
    key(page, "logs_kind").get_by_text("Event log").click()
    wait_for_app(page)
    fill(page, "logs_event_text", "merge")
    expect(key(page, "logs_event_table_box")).to_be_visible()  # some event matches at all
    assert eventually(page, lambda: "entity.merged" in table_text(page, "logs_event_table"))
    fill(page, "logs_event_text", "ui:")  # the actor
    assert eventually(page, lambda: "entity.merged" in table_text(page, "logs_event_table"))

    nav(page, "Records")
    select(page, "records_selected", launch)
    page.get_by_role("tab", name="History").click()
    assert eventually(page, lambda: "entity.merged" in table_text(page, "records_detail_events"))
    assert "merged into" in table_text(page, "records_detail_events")

    nav(page, "Review queue")
    open_queue(page, "Provisional records")
    select(page, "review_selected", ids["bob_editor_vscode_guess"])
    expect(page.get_by_text(re.compile(r"This record conflicts with 1 other record"))).to_be_visible()
    assert eventually(page, lambda: ids["bob_editor_neovim"] in table_text(page, "review_conflicts"))


def test_item9_times_read_the_same_everywhere_and_name_their_zone(app_server, page):
    base, store = app_server
    ids = handles(store)
    goto(page, base)
    nav(page, "Records")
    select(page, "records_selected", ids["alice_lisbon_trip"])
    expect(page.get_by_text(re.compile(rf"Review due since {READABLE}"))).to_be_visible()
    page.get_by_role("tab", name="Evidence").click()
    turns = key(page, "records_detail_turns").locator('[data-testid="stText"]')
    expect(turns.first).to_contain_text(re.compile(rf"^turn \d+ · \w+ · {READABLE}"))
    assert not [t for t in turns.all_inner_texts() if RAW_ISO.search(t)]

    nav(page, "Session context")
    select(page, "context_session_id", "s04-alice-weekly-planning")
    header = key(page, "context_session").locator('[data-testid="stText"]').first
    expect(header).to_contain_text(re.compile(rf"started {READABLE}"))
    assert not RAW_ISO.search(header.inner_text())
