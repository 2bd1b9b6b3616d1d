"""As-of search in the explorer, in headless Chromium against a real `streamlit run` over the demo store.

Alice's answer-style preference changes twice in the demo (8 January, 3 February, later); asked as
of 20 January, the explorer answers the first value, and without an as-of date today's.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.app_utils import click, fill, goto, key, nav, select, table_text
from tests.e2e.test_journeys import handles

pytestmark = pytest.mark.e2e
QUERY = "How does Alice like her answers formatted?"


def test_an_as_of_search_answers_the_older_value(app_server, page):
    base, store = app_server
    ids = handles(store)
    goto(page, base)
    nav(page, "Search explorer")
    select(page, "explorer_agent", "assistant")
    select(page, "explorer_user", "alice")
    fill(page, "explorer_query", QUERY, submit=False)
    as_of = key(page, "explorer_as_of_date")
    for part, value in (("year", "2026"), ("month", "01"), ("day", "20")):
        spin = as_of.get_by_role("spinbutton", name=f"{part}, As of: date (UTC)")
        spin.focus()  # typed, not clicked: a click opens the calendar over the form
        spin.type(value)
    page.keyboard.press("Escape")
    click(page, "explorer_run")
    expect(page.get_by_text("As of 2026-01-20T23:59:59.999999Z: what the memory held then", exact=True)).to_be_visible()
    page.get_by_role("tab", name="Results").click()
    then = table_text(page, "explorer_results")
    assert ids["alice_answer_style_v1"] in then
    assert ids["alice_answer_style_v3"] not in then and ids["alice_answer_style_v2"] not in then

    # the same question without the date (a fresh session) answers today's value
    goto(page, base)
    nav(page, "Search explorer")
    select(page, "explorer_agent", "assistant")
    select(page, "explorer_user", "alice")
    fill(page, "explorer_query", QUERY, submit=False)
    click(page, "explorer_run")
    expect(page.get_by_text("As of 2026-01-20T23:59:59.999999Z: what the memory held then", exact=True)).to_have_count(0)
    page.get_by_role("tab", name="Results").click()
    now = table_text(page, "explorer_results")
    assert ids["alice_answer_style_v3"] in now and ids["alice_answer_style_v1"] not in now
