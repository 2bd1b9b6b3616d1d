"""Journeys for what people expect beyond the bugs: row clicks and permalinks that survive sign-in,
the overview dashboard, the demo sign-in page, and nothing fetched from outside the server."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.e2e.app_utils import goto, key, nav, sign_in, sign_out, wait_for_app
from tests.e2e.test_journeys import PASSWORDS, db_row, handles

pytestmark = pytest.mark.e2e


def demo_searches(store) -> dict[str, str]:
    with sqlite3.connect(store) as conn:
        raw = json.loads(conn.execute("SELECT value FROM store_meta WHERE key = 'demo_searches'").fetchone()[0])
    if isinstance(raw, dict):
        return {label: (v["search_id"] if isinstance(v, dict) else v) for label, v in raw.items()}
    return {item["label"]: item["search_id"] for item in raw}


def click_row(page, table_key: str, row: int) -> None:
    """Click the row marker of data row ``row`` (0-based) of a selectable dataframe (the grid is a canvas)."""
    grid = key(page, f"{table_key}_box").locator('[data-testid="stDataFrame"]')
    expect(grid).to_be_visible()
    box = grid.bounding_box()
    header = row_height = 35
    page.mouse.click(box["x"] + 12, box["y"] + header + row_height * row + row_height / 2)
    wait_for_app(page)


def test_permalinks_survive_sign_in_and_a_row_click_opens_a_record(plain_server, page):
    base, store = plain_server
    lisbon = handles(store)["alice_lisbon_trip"]
    goto(page, base, f"records?record={lisbon}")
    expect(page.get_by_text("Sign in to open Records")).to_be_visible()
    sign_in(page, "viewer", PASSWORDS["viewer"])
    expect(page.get_by_role("heading", name="Records", exact=True)).to_be_visible()
    expect(page.locator('[data-testid="stCode"]').filter(has_text="Lisbon").first).to_be_visible()
    assert f"record={lisbon}" in page.url

    # A click on a row opens that record, and the address bar follows.
    first_id = db_row(store, "SELECT id FROM records WHERE status != 'deleted' ORDER BY created_at DESC, seq DESC LIMIT 1")["id"]
    click_row(page, "records_table", 0)
    expect(page.locator('[data-testid="stText"]').filter(has_text=re.compile(f"^{first_id} · ")).first).to_be_visible()
    expect(page).to_have_url(re.compile(f"record={first_id}"))

    # Searches, runs and sessions have permalinks too; the sign-in cookie keeps the viewer signed in.
    searches = demo_searches(store)
    goto(page, base, f"search?search={searches['off-topic']}")
    expect(key(page, "explorer_empty_reason")).to_contain_text("No memory returned")
    expect(page.get_by_text("Query: banana bread recipe with walnuts")).to_be_visible()
    run = db_row(store, "SELECT id, session_id FROM extraction_runs ORDER BY created_at LIMIT 1")
    goto(page, base, f"extraction?run={run['id']}")
    expect(page.locator('[data-testid="stText"]').filter(has_text=re.compile(f"^{run['id']} · session")).first).to_be_visible()
    goto(page, base, f"extraction?session={run['session_id']}")
    first_turn = db_row(store, "SELECT content FROM turns WHERE session_id = ? ORDER BY turn LIMIT 1", (run["session_id"],))
    expect(key(page, "extraction_session_view")).to_contain_text(first_turn["content"][:60])
    expect(page.locator(".st-key-signout")).to_be_visible()


def test_a_user_permalink_opens_only_their_own_records(plain_server, page):
    base, store = plain_server
    bobs = handles(store)["bob_editor_vscode_guess"]
    goto(page, base, f"records?record={bobs}")
    sign_in(page, "alice", PASSWORDS["alice"])
    expect(page.get_by_text(f"No record {bobs} that you can see.")).to_be_visible()
    assert page.get_by_text("VS Code").count() == 0


def test_the_overview_is_a_dashboard_with_plain_captions(app_server, page):
    base, _ = app_server
    goto(page, base)
    for title, caption in [
        ("Store composition over time", "live records of each type"),
        ("Searches per day", "95th-percentile (p95)"),
        ("Empty answers and why", "logged searches returned nothing"),
        ("Review backlog", "wait for a person"),
        ("Extraction outcomes", "extraction run(s) by status"),
    ]:
        card = page.locator('[class*="st-key-overview_dash_"]').filter(has_text=title)
        expect(card).to_contain_text(caption)
        expect(card.locator(".js-plotly-plot .main-svg").first).to_be_attached()
    # The demo's empty searches are counted, and the floors are the top reason (grouped by kind, the label wrapped).
    expect(page.locator(".st-key-overview_dash_empty_card")).to_contain_text(re.compile(r"\d+ of \d+ logged searches"))
    expect(page.locator(".st-key-overview_dash_empty_card")).to_contain_text(
        re.compile(r"weak match: below the\s*relevance floors"))
    assert page.get_by_text("Traceback").count() == 0


def test_the_demo_sign_in_page_lists_the_accounts_and_nothing_is_fetched_elsewhere(app_server, page):
    base, _ = app_server
    outside, failed = [], []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith((base, "data:", "blob:")) else None)
    page.on("requestfailed", lambda r: failed.append(r.url))
    goto(page, base)
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    sign_out(page)
    accounts = key(page, "signin_demo_accounts_box")
    expect(page.get_by_role("heading", name="Demo accounts")).to_be_visible()
    grid_text = accounts.locator("td")
    expect(grid_text.first).to_be_attached()
    shown = " ".join(grid_text.all_text_contents())
    for name, role in [("viewer", "viewer"), ("reviewer", "reviewer"), ("operator", "operator"), ("admin", "admin"),
                       ("alice", "user")]:
        assert name in shown and role in shown and f"{name}-demo-2026" in shown
    favicon = page.locator('link[rel~="icon"]').first.get_attribute("href") or ""
    assert favicon.startswith(("data:", "/", base)), favicon
    assert outside == [], outside
    assert [u for u in failed if "/_stcore/" not in u] == [], failed
