"""Screenshots of the main pages on the demo store (test-artifacts/screenshots/).

With UPDATE_SCREENSHOTS=1 they are also copied to docs/screenshots/, which the docs embed.
"""

from __future__ import annotations

import os
import shutil

import pytest

from tests.e2e.app_utils import click, fill, goto, key, nav, select, wait_for_app
from tests.e2e.conftest import ARTIFACTS, ROOT

pytestmark = pytest.mark.e2e

DOCS = ROOT / "docs" / "screenshots"


@pytest.fixture
def tall_page(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 2000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    yield page
    context.close()


def shoot(page, name: str) -> None:
    wait_for_app(page)
    if page.locator('[data-testid="stPlotlyChart"]').count():
        page.wait_for_selector(".js-plotly-plot .main-svg", state="attached", timeout=30_000)
    page.wait_for_timeout(800)
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
    shoot(page, "overview")

    nav(page, "Search explorer")
    select(page, "explorer_agent", "assistant")
    select(page, "explorer_user", "alice")
    fill(page, "explorer_query", "banana bread recipe with walnuts", submit=False)
    click(page, "explorer_run")
    page.get_by_role("tab", name="Stages").click()
    for _ in range(9):
        click(page, "explorer_next")
    shoot(page, "search-explorer-empty")
    fill(page, "explorer_query", "Lisbon trip dates", submit=False)
    click(page, "explorer_run")
    page.get_by_role("tab", name="Charts").click()
    shoot(page, "search-explorer-charts")

    nav(page, "Records")
    select(page, "records_scope", "user:alice")
    select(page, "records_selected", "Alice wants concise answers")
    page.get_by_role("tab", name="Lineage").click()
    shoot(page, "records")

    nav(page, "Review queue")
    key(page, "review_queue").get_by_text("Review due").click()
    wait_for_app(page)
    select(page, "review_selected", "Lisbon")
    shoot(page, "review-queue")

    nav(page, "Grants")
    select(page, "grants_principal_agent", "scheduler")
    select(page, "grants_principal_user", "alice")
    fill(page, "grant_add_agent", "coder", submit=False)
    fill(page, "grant_add_scope", "agent:assistant/alice", submit=False)
    fill(page, "grant_add_reason", "showing the private-scope refusal", submit=False)
    click(page, "grant_add_submit")
    shoot(page, "grants")

    nav(page, "Entities")
    select(page, "entities_proposal", "Atlas project → Project Atlas")
    shoot(page, "entities-merge-preview")

    nav(page, "Extraction")
    select(page, "extraction_run", "run_")
    shoot(page, "extraction")

    nav(page, "Logs")
    select(page, "logs_search_selected", "")
    shoot(page, "logs")
