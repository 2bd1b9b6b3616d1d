"""Screenshots of the main pages on the demo store (test-artifacts/screenshots/): ``make screenshots``.

Not part of the default test run (it takes a minute or two and documents rather than tests):
it runs only with ``SCREENSHOTS=1`` or ``UPDATE_SCREENSHOTS=1``; the second also copies the
images to docs/screenshots/, which the docs embed. Each shot first checks that its page shows
what the picture is meant to show, so a broken page is a failure, not a silent bad picture.
"""

from __future__ import annotations

import os
import shutil

import pytest

from playwright.sync_api import expect

from tests.e2e.app_utils import click, fill, goto, key, nav, select, wait_for_app
from tests.e2e.test_browsing import click_row
from tests.e2e.conftest import ARTIFACTS, ROOT

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not (os.environ.get("SCREENSHOTS") == "1" or os.environ.get("UPDATE_SCREENSHOTS") == "1"),
                       reason="screenshots are taken by `make screenshots` (SCREENSHOTS=1)"),
]

DOCS = ROOT / "docs" / "screenshots"


@pytest.fixture
def tall_page(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 2000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    yield page
    context.close()


def shoot(page, name: str, *shows: str) -> None:
    """Screenshot the page once it shows each text in ``shows`` (and its charts have drawn)."""
    wait_for_app(page)
    for text in shows:
        expect(page.get_by_text(text).filter(visible=True).first).to_be_visible()
    if page.locator('[data-testid="stPlotlyChart"]').count():
        expect(page.locator(".js-plotly-plot .main-svg").first).to_be_attached()
    assert not page.get_by_text("Traceback").count()
    out = ARTIFACTS / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / f"{name}.png"))
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        DOCS.mkdir(parents=True, exist_ok=True)
        shutil.copy(out / f"{name}.png", DOCS / f"{name}.png")


def test_main_pages(app_server, tall_page):
    base, _ = app_server
    page = tall_page
    goto(page, base)
    shoot(page, "overview", "Store composition", "Searches per day")

    nav(page, "Search explorer")
    select(page, "explorer_agent", "assistant")
    select(page, "explorer_user", "alice")
    fill(page, "explorer_query", "banana bread recipe with walnuts", submit=False)
    click(page, "explorer_run")
    page.get_by_role("tab", name="Stages").click()
    for _ in range(10):  # to the gate
        click(page, "explorer_next")
    shoot(page, "search-explorer-empty", "No memory returned", "Stage 11 of")
    fill(page, "explorer_query", "Lisbon trip dates", submit=False)
    click(page, "explorer_run")
    page.get_by_role("tab", name="Charts").click()
    shoot(page, "search-explorer-charts", "result(s)")

    nav(page, "Records")
    select(page, "records_scope", "user:alice")
    select(page, "records_selected", "Alice wants concise answers")
    page.get_by_role("tab", name="Lineage").click()
    shoot(page, "records", "Alice wants concise answers")

    nav(page, "Review queue")
    key(page, "review_queue").get_by_text("Review due").click()
    wait_for_app(page)
    select(page, "review_selected", "Lisbon")
    shoot(page, "review-queue", "Clear the flag")

    nav(page, "Grants")
    select(page, "grants_principal_agent", "scheduler")
    select(page, "grants_principal_user", "alice")
    fill(page, "grant_add_agent", "coder", submit=False)
    fill(page, "grant_add_scope", "agent:assistant/alice", submit=False)
    fill(page, "grant_add_reason", "showing the private-scope refusal", submit=False)
    click(page, "grant_add_submit")
    shoot(page, "grants", "private")

    nav(page, "Entities")
    select(page, "entities_proposal", "Atlas project → Project Atlas")
    shoot(page, "entities-merge-preview", "record link(s) move to the target")

    nav(page, "Extraction")
    select(page, "extraction_run", "run_")
    shoot(page, "extraction", "Candidates")

    nav(page, "Logs")
    click_row(page, "logs_search_table", 0)
    shoot(page, "logs", "Search log", "Open in the search explorer")
