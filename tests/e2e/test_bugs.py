"""One journey per bug of issue 18, each failing on the code before its fix.

Every journey starts a fresh browser session, works only through the UI and waits on the text it
expects (``expect(...)``), never on a fixed pause; where the UI's word is not enough, the store
file is read directly.
"""

from __future__ import annotations

import re
import sqlite3

import pytest
from playwright.sync_api import expect

WORD_JOINER = "\u2060"  # what admin_ui.widgets.md_escape puts between "-" and "-"
from tests.e2e.app_utils import (
    check, click, fill, goto, key, nav, select, sign_in, sign_in_as, sign_out, wait_for_app,
)
from tests.e2e.test_journeys import PASSWORDS, db_row, handles, search

pytestmark = pytest.mark.e2e

SIDEBAR = '[data-testid="stSidebar"]'


def open_queue(page, name: str) -> None:
    key(page, "review_queue").get_by_text(name).click()
    wait_for_app(page)


def test_bug1_a_review_date_is_read_like_the_extractor_reads_it_and_must_be_in_the_future(app_server, page):
    base, store = app_server
    holiday = handles(store)["org_spring_holiday"]
    sign_in_as(page, base, "reviewer", PASSWORDS["reviewer"])
    nav(page, "Review queue")
    open_queue(page, "Review due")
    select(page, "review_selected", holiday)
    fill(page, "review_clear_next", "2020-01-01")
    expect(page.get_by_text(re.compile("the next review must be in the future"))).to_be_visible()
    fill(page, "review_clear_reason", "still true", submit=False)
    click(page, "review_clear_submit")
    expect(page.get_by_text("Fix the next review date first")).to_be_visible()
    assert db_row(store, "SELECT review_flagged_at FROM records WHERE id = ?", (holiday,))["review_flagged_at"]

    fill(page, "review_clear_next", "next week")  # the demo clock says Monday 20 April 2026
    expect(page.get_by_text(re.compile(r"Next review: 27 Apr 2026, 00:00:00 UTC"))).to_be_visible()
    fill(page, "review_clear_reason", "still true; look again next week", submit=False)
    click(page, "review_clear_submit")
    expect(page.get_by_text(re.compile(f"Cleared the review flag on {holiday}; next review 27 Apr 2026, 00:00:00 UTC"))
           ).to_be_visible()
    row = db_row(store, "SELECT review_flagged_at, review_at FROM records WHERE id = ?", (holiday,))
    assert row["review_flagged_at"] is None and row["review_at"].startswith("2026-04-27T00:00:00")
    assert not page.get_by_text("ValueError").count()


def test_bug2_a_deep_link_survives_sign_in_without_demo_mode(plain_server, page):
    base, _ = plain_server
    goto(page, base, "grants")
    expect(page.get_by_text("Sign in to open Grants")).to_be_visible()
    assert page.get_by_text(re.compile("Page not found")).count() == 0
    assert page.locator('[data-testid="stSidebarNav"]').count() == 0  # no menu before signing in
    sign_in(page, "operator", PASSWORDS["operator"])
    expect(page.get_by_role("heading", name="Grants", exact=True)).to_be_visible()
    assert page.url.rstrip("/").endswith("/grants")
    expect(page.locator(SIDEBAR).get_by_text(re.compile("· operator"))).to_be_visible()


def test_bug3_a_reload_never_changes_who_you_are(app_server, page):
    base, _ = app_server
    sign_in_as(page, base, "alice", PASSWORDS["alice"])
    sidebar = page.locator(SIDEBAR)
    expect(sidebar.get_by_text(re.compile("· user alice"))).to_be_visible()
    page.reload()
    wait_for_app(page)
    expect(sidebar.get_by_text(re.compile("· user alice"))).to_be_visible()
    assert sidebar.get_by_text("Demo operator").count() == 0
    goto(page, base, "records")  # a typed URL
    expect(page.get_by_role("heading", name="My memory")).to_be_visible()
    expect(sidebar.get_by_text(re.compile("· user alice"))).to_be_visible()
    # Signing out sticks across a reload too: the demo operator does not come back on its own.
    sign_out(page)
    page.reload()
    wait_for_app(page)
    expect(page.get_by_text("Sign in to agent-memory")).to_be_visible()
    assert page.get_by_text("Demo operator · operator").count() == 0


def test_bug4_a_destructive_form_is_empty_after_success(app_server, page):
    base, _ = app_server
    goto(page, base)
    nav(page, "Grants")
    select(page, "grant_revoke_choice", "coder → org:northwind")
    fill(page, "grant_revoke_reason", "coder no longer reads company notes", submit=False)
    check(page, "grant_revoke_confirm")
    click(page, "grant_revoke_submit")
    expect(page.get_by_text("Revoked coder on org:northwind")).to_be_visible()
    expect(key(page, "grant_revoke_reason").locator("input")).to_have_value("")
    expect(key(page, "grant_revoke_confirm").locator("input")).not_to_be_checked()
    # The next revoke needs the reason and the tick again.
    select(page, "grant_revoke_choice", "coder → project:atlas")
    click(page, "grant_revoke_submit")
    expect(page.get_by_text("Give a reason")).to_be_visible()


def test_bug5_a_long_query_is_kept_and_the_limit_is_said(app_server, page):
    base, _ = app_server
    goto(page, base)
    nav(page, "Search explorer")
    long_query = ("Where is Alice travelling next and when? " * 70)[:2500]
    select(page, "explorer_agent", "assistant")
    select(page, "explorer_user", "alice")
    fill(page, "explorer_query", long_query, submit=False)
    expect(key(page, "explorer_query").locator("input")).to_have_value(long_query)
    click(page, "explorer_run")
    expect(page.get_by_text("The query is 2,500 characters long; the limit is 2,000")).to_be_visible()
    assert page.get_by_text("Choose an agent").count() == 0


def test_bug6_a_failed_search_does_not_leave_the_previous_answer(app_server, page):
    base, _ = app_server
    goto(page, base)
    nav(page, "Search explorer")
    search(page, "assistant", "alice", "Lisbon trip dates")
    expect(page.get_by_text(re.compile(r"\d+ result\(s\)"))).to_be_visible()
    fill(page, "explorer_query", "   ", submit=False)
    click(page, "explorer_run")
    expect(page.get_by_text("Type a query (this one is only whitespace).")).to_be_visible()
    expect(page.get_by_text(re.compile(r"\d+ result\(s\)"))).to_have_count(0)
    expect(key(page, "explorer_results_box")).to_have_count(0)

    search(page, "assistant", "alice", "Lisbon trip dates")
    expect(page.get_by_text(re.compile(r"\d+ result\(s\)"))).to_be_visible()
    select(page, "explorer_agent", "bad agent/with:colon")
    click(page, "explorer_run")
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="agent").first).to_be_visible()
    expect(page.get_by_text(re.compile(r"\d+ result\(s\)"))).to_have_count(0)


def test_bug7_escaped_text_stays_literal(app_server, page):
    base, _ = app_server
    goto(page, base)
    nav(page, "Search explorer")
    page.get_by_text("Open a logged search").click()
    fill(page, "explorer_search_id", "a--b -- x -> y", submit=False)
    click(page, "explorer_open")
    alert = page.locator('[data-testid="stAlert"]').filter(has_text=re.compile("no logged search", re.I))
    expect(alert).to_be_visible()
    shown = alert.inner_text().replace(WORD_JOINER, "")
    assert "no logged search a--b -- x -> y" in shown, shown
    assert "—" not in shown and "→" not in shown


def test_bug8_new_extraction_runs_are_listed_newest_first_under_the_demo_clock(app_server, page):
    # The demo clock stamps every run with the same instant, so only the creation order can tell
    # them apart. Run ids are random: runs are triggered until their newest-first order differs
    # from the order of their ids, so a tie broken by id alone cannot pass by luck.
    base, store = app_server
    goto(page, base)
    nav(page, "Extraction")
    with sqlite3.connect(store) as conn:
        sessions = [r[0] for r in conn.execute(
            "SELECT id FROM sessions WHERE ended_at IS NOT NULL ORDER BY ended_at LIMIT 8")]
    started: list[str] = []
    for session in sessions:
        select(page, "extraction_session", session)
        click(page, "extraction_trigger")
        flash = page.locator('[data-testid="stAlert"]').filter(has_text=re.compile(r"^Run run_\S+"))
        expect(flash).to_be_visible()
        run_id = re.search(r"run_[0-9A-Za-z_]+", flash.inner_text()).group(0)
        assert run_id not in started
        started.append(run_id)
        if len(started) >= 2 and list(reversed(started)) != sorted(started, reverse=True):
            break
    assert list(reversed(started)) != sorted(started, reverse=True), "eight runs whose ids happened to sort by time"
    rows = key(page, "extraction_runs_table_box").locator("tbody tr")
    for n, run_id in enumerate(reversed(started)):
        expect(rows.nth(n)).to_contain_text(run_id)


def test_bug9_a_reviewers_edit_is_a_confirmed_statement(app_server, page):
    base, store = app_server
    guess = handles(store)["bob_editor_vscode_guess"]
    sign_in_as(page, base, "reviewer", PASSWORDS["reviewer"])
    nav(page, "Review queue")
    select(page, "review_selected", guess)
    fill(page, f"review_edit_content_{guess}", "Bob uses VS Code with Vim keybindings.", submit=False)
    fill(page, "review_edit_reason", "Bob told me in person", submit=False)
    click(page, "review_edit_submit")
    expect(page.get_by_text(re.compile(f"Wrote a new version of {guess}"))).to_be_visible()
    new = db_row(store, "SELECT id, status, source_kind, expires_at FROM records WHERE supersedes_id = ?", (guess,))
    assert (new["status"], new["source_kind"], new["expires_at"]) == ("confirmed", "system", None)
    with sqlite3.connect(store) as conn:
        actor = conn.execute("SELECT actor FROM write_log WHERE record_id = ?", (new["id"],)).fetchone()
    assert actor is None or actor[0] == "ui:reviewer"
    # It left the provisional queue.
    fill(page, "review_text", new["id"])
    expect(page.get_by_text("No record in this queue matches the filters.")).to_be_visible()
