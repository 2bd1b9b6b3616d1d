"""Issue 27 items 12, 13 and 15 in a real browser against a real `streamlit run` over the demo store.

- What an agent sees (12): an agent without a grant gets an empty state that says why; the
  assistant's readable scopes come with their grants, and the prefix (policy, Alice's ambient
  profile, tools) is the adapters' own, with sizes.
- Session context with sizes (13): each part of an adapter-recorded session's context with its
  estimated tokens and share; a memory's status as it was then ("confirmed then, forgotten since",
  its text not shown; "confirmed then, superseded since").
- The demo (15): on first start, sessions recorded through the adapter runtime, ambient candidates,
  a failed extraction run, and every demo account lands on a page its role may open.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.e2e.app_utils import (alerts, click, eventually, goto, key, nav, select, sign_in, sign_out, table_text,
                                 wait_for_app)
from tests.e2e.conftest import start_server, stop_server

pytestmark = pytest.mark.e2e

ADAPTED = "s13-alice-hybrid-assistant"
HOST_DECIDED = "s14-bob-hybrid-coder"
FORGOTTEN_TEXT = "The user leads product for Project Atlas here at Northwind."
ACCOUNTS = [("viewer", "viewer"), ("reviewer", "reviewer"), ("operator", "operator"), ("admin", "admin"), ("alice", "user")]


def forget_a_received_memory(store) -> str:
    """Forget (through the service) a record the model of the adapter session received: the view
    must say it was confirmed then and forgotten since, without its text."""
    from memory_core import FixedClock, MemoryService, load_settings

    with sqlite3.connect(store) as conn:
        now = conn.execute("SELECT value FROM store_meta WHERE key = 'demo_now'").fetchone()[0]
    with MemoryService.open(store, load_settings(), clock=FixedClock(now)) as service:
        received = {rid for s in service.session_searches(ADAPTED) for rid in s["result_ids"]}
        (record_id,) = [rid for rid in received if service.record(rid).content == FORGOTTEN_TEXT]
        service.forget(record_id, actor="e2e", reason="the user asked")
    return record_id


@pytest.fixture(scope="module")
def forgotten_server(demo_template, tmp_path_factory):
    work = tmp_path_factory.mktemp("sizes")
    template = work / "template.sqlite"
    shutil.copy(demo_template, template)
    record_id = forget_a_received_memory(template)
    (work / "server").mkdir()
    proc, base, store, log = start_server(template, work / "server", demo=True)
    yield base, store, record_id
    stop_server(proc, log)


# -- 12: what an agent sees --------------------------------------------------------------------------


def ambient_on(page) -> None:
    """Turn the page's Ambient profile switch on (its default is the ambient.enabled setting)."""
    box = key(page, "agent_view_ambient").locator('input[type="checkbox"]')
    if not box.is_checked():
        key(page, "agent_view_ambient").locator("label").first.click()
        wait_for_app(page)
    expect(box).to_be_checked()


def test_an_agent_without_a_grant_gets_an_empty_state_that_says_why(app_server, page):
    base, _ = app_server  # an untouched copy of the demo store (the first start)
    goto(page, base)
    nav(page, "What an agent sees")
    expect(page.get_by_text("Choose an agent and a user", exact=False)).to_be_visible()
    select(page, "agent_view_agent", "scheduler")
    select(page, "agent_view_user", "alice")
    empty = key(page, "agent_no_grant")
    expect(empty).to_contain_text("Agent scheduler has no read grant for user alice")
    expect(empty).to_contain_text("agent:scheduler/alice, which holds 0 live record(s)")
    assert eventually(page, lambda: "agent:scheduler/alice" in table_text(page, "agent_scopes_table"))
    assert "user:alice" not in table_text(page, "agent_scopes_table")
    expect(key(page, "agent_profile")).to_contain_text("Off: the host has not turned the ambient profile on")
    ambient_on(page)
    expect(key(page, "agent_profile")).to_contain_text("No record qualified")


def test_the_assistant_reads_its_granted_scopes_and_gets_alices_profile(app_server, page):
    base, _ = app_server  # an untouched copy of the demo store (the first start)
    goto(page, base)
    nav(page, "What an agent sees")
    select(page, "agent_view_agent", "assistant")
    select(page, "agent_view_user", "alice")
    assert eventually(page, lambda: "read grant for agent assistant on user:alice" in table_text(page, "agent_scopes_table"))
    scopes = table_text(page, "agent_scopes_table")
    assert "by demo-seed" in scopes and "project:atlas" in scopes and "org:northwind" in scopes
    assert "user:bob" not in scopes
    expect(key(page, "agent_no_grant")).to_have_count(0)
    # the ambient profile on: Alice's confirmed answer style is in it; the tool-result preference waits
    ambient_on(page)
    profile = key(page, "agent_profile")
    expect(profile.locator('[data-testid="stCode"]').filter(has_text="concise answers")).to_be_visible()
    assert eventually(page, lambda: "needs a reviewer's approval" in table_text(page, "agent_profile_excluded"))
    expect(key(page, "agent_policy").locator('[data-testid="stCode"]').filter(has_text="Long-term memory")).to_be_visible()
    select(page, "agent_view_mode", "auto")
    expect(key(page, "agent_policy")).to_contain_text("you cannot search memory yourself")
    sizes = key(page, "agent_sizes")
    expect(sizes).to_contain_text("offline estimate")
    assert eventually(page, lambda: "ambient profile" in table_text(page, "agent_sizes_table"))
    assert "memory-use policy" in table_text(page, "agent_sizes_table")


# -- 13: session context with sizes ---------------------------------------------------------------------


def test_a_sessions_context_window_part_by_part(forgotten_server, page):
    base, store, record_id = forgotten_server
    goto(page, base)
    nav(page, "Session context")
    select(page, "context_session_id", HOST_DECIDED)
    sizes = key(page, "context_sizes")
    expect(sizes).to_contain_text("tokens in all")
    expect(sizes).to_contain_text("offline estimate")
    assert eventually(page, lambda: "tool-result JSON around it" in table_text(page, "context_sizes_table"))
    parts = table_text(page, "context_sizes_table")
    for part in ("system text (the host's own)", "memory-use policy", "ambient profile", "tool definitions",
                 "conversation turns", "host decision at"):
        assert part in parts, part
    assert re.search(r"\d+\.\d%", parts)
    expect(key(page, "context_system").locator('[data-testid="stCode"]')
           .filter(has_text="You are Bob's pair programmer")).to_be_visible()


def test_a_memory_shows_its_status_then_and_a_forgotten_ones_text_is_not_shown(forgotten_server, page):
    base, store, record_id = forgotten_server
    goto(page, base)
    nav(page, "Session context")
    select(page, "context_session_id", ADAPTED)
    assert eventually(page, lambda: "confirmed then, forgotten since" in table_text(page, "context_sizes_table"))
    assert record_id in table_text(page, "context_sizes_table")
    expect(page.get_by_text(FORGOTTEN_TEXT)).to_have_count(0)
    assert FORGOTTEN_TEXT not in page.content()
    # an older session: the release checklist it received was confirmed then and superseded since
    select(page, "context_session_id", "s09-alice-after-lisbon")
    assert eventually(page, lambda: "confirmed then, superseded since" in table_text(page, "context_sizes_table"))


# -- 15: the demo shows every feature on first start -----------------------------------------------------


def test_the_demo_has_adapter_sessions_ambient_candidates_and_a_failed_run(app_server, page):
    base, store = app_server  # an untouched copy of the demo store (the first start)
    goto(page, base)
    expect(page.get_by_text("failed 1", exact=False).first).to_be_visible()  # the overview counts it
    nav(page, "Session context")
    select(page, "context_session_id", ADAPTED)
    expect(key(page, "context_session")).to_contain_text("demo-host · hybrid")
    expect(key(page, "context_profile").locator('[data-testid="stCode"]').filter(has_text="concise answers")).to_be_visible()
    expect(page.get_by_text("host decision by offline", exact=False).first).to_be_visible()
    expect(page.get_by_text("the model's own memory_search", exact=False).first).to_be_visible()
    assert eventually(page, lambda: "calendar_lookup" in table_text(page, "context_offered_tools"))
    select(page, "context_session_id", HOST_DECIDED)
    expect(page.get_by_text("1 of 3 candidate(s) admitted", exact=False).first).to_be_visible()
    expect(page.get_by_text("Tool result appended for the model").first).to_be_visible()

    nav(page, "Review queue")
    key(page, "review_queue").get_by_text("Ambient candidates (2)").click()
    wait_for_app(page)
    assert eventually(page, lambda: "24-hour" in table_text(page, "ambient_review_table"))
    assert "metric measurement units" in table_text(page, "ambient_review_table")

    nav(page, "Extraction")
    select(page, "extraction_runs_status", "failed")
    assert eventually(page, lambda: HOST_DECIDED in table_text(page, "extraction_runs_table"))
    with sqlite3.connect(store) as conn:
        run_id = conn.execute("SELECT id FROM extraction_runs WHERE status = 'failed'").fetchone()[0]
    select(page, "extraction_run", run_id)
    expect(page.get_by_text("the last attempt never finished").first).to_be_visible()
    assert eventually(page, lambda: "abandoned" in table_text(page, "extraction_attempts_table"))
    expect(key(page, "extraction_retry")).to_be_visible()


@pytest.mark.parametrize("username, role", ACCOUNTS)
def test_every_demo_account_lands_on_a_page_its_role_may_open(plain_server, page, username, role):
    base, _ = plain_server
    goto(page, base)
    sign_in(page, username, f"{username}-demo-2026")
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_text(f"· {role}", exact=False)).to_be_visible()
    wait_for_app(page)
    from admin_ui.auth.accounts import Identity
    from admin_ui.views.navigation import page_specs

    specs = page_specs(Identity(username, role, user_id="alice" if role == "user" else None))
    first_title = specs[0][1]
    heading = {"Records": "Records", "My memory": "My memory"}.get(first_title, first_title)
    expect(page.get_by_role("heading", name=heading).first).to_be_visible()
    assert eventually(page, lambda: page.url.rstrip("/").endswith(specs[0][3]))
    assert not [a for a in alerts(page) if "cannot open" in a]
    sign_out(page)


def test_a_user_following_a_staff_link_lands_on_her_own_page_and_is_told_why(plain_server, page):
    base, _ = plain_server
    goto(page, base, "overview")
    expect(page.get_by_text("if your role may open it", exact=False)).to_be_visible()
    sign_in(page, "alice", "alice-demo-2026")
    expect(page.get_by_role("heading", name="My memory").first).to_be_visible()
    expect(page.get_by_text("Your role (user) cannot open Overview.")).to_be_visible()
    assert "Overview" not in page.locator('[data-testid="stSidebarNav"]').inner_text()
    sign_out(page)
