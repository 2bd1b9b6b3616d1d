"""In the browser: an operator creates an MCP key, its token (shown once) opens a session on a real
`agent-memory mcp --http` over the same store, and revoking it in the app shuts that session out."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.app_utils import check, click, fill, goto, key, nav, sign_in_as, table_text
from tests.mcp.raw_client import RawHttpSession
from tests.mcp.servers import ServerProcess

pytestmark = pytest.mark.e2e


def test_an_operator_creates_a_key_uses_it_over_mcp_and_revokes_it(app_server, page):
    base, store = app_server
    goto(page, base)
    nav(page, "Keys")
    fill(page, "key_create_agent", "assistant", submit=False)
    fill(page, "key_create_user", "alice", submit=False)
    fill(page, "key_create_label", "browser test", submit=False)
    fill(page, "key_create_reason", "alice's new laptop", submit=False)
    click(page, "key_create_submit")
    expect(page.get_by_text("Copy the token now")).to_be_visible()
    expect(page.get_by_text("will not be shown again")).to_be_visible()
    expect(page.get_by_text("use the copy button")).to_be_visible()
    code = page.locator('[data-testid="stCode"]').first
    expect(code).to_contain_text("am_model_")
    assert "browser test" in table_text(page, "keys_table")  # the list already has the new key
    tokens = set(re.findall(r"am_model_[A-Za-z0-9_-]{43}", "\n".join(page.locator('[data-testid="stCode"]').all_text_contents())))
    assert len(tokens) == 1  # the token (and the client line that holds the same one)
    token = tokens.pop()

    with ServerProcess(store) as server:
        session = RawHttpSession(server.url, token)
        assert session.initialize()["serverInfo"]["name"] == "agent-memory"
        found = session.call("memory_search", {"query": "What does Alice prefer?"})
        assert found["result"]["isError"] is False

        page.reload()
        expect(key(page, "keys_table_box")).to_be_visible()
        assert token not in page.content()  # shown once: a reload shows only the key's row
        assert "browser test" in table_text(page, "keys_table")
        key(page, "key_revoke_choice").locator('[role="combobox"]').first.click()
        page.locator('[role="option"]').filter(has_text="browser test").first.click()
        fill(page, "key_revoke_reason", "laptop returned", submit=False)
        check(page, "key_revoke_confirm")
        click(page, "key_revoke_submit")
        expect(page.get_by_text("its token now gets 401")).to_be_visible()
        assert session.post({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}).status_code == 401
        session.close()


def test_keys_are_for_operators_only(app_server, page):
    base, _ = app_server
    sign_in_as(page, base, "reviewer", "reviewer-demo-2026")
    sidebar = page.locator('[data-testid="stSidebarNav"]')
    expect(sidebar.get_by_role("link", name="Grants", exact=True)).to_be_visible()
    expect(sidebar.get_by_role("link", name="Keys", exact=True)).to_have_count(0)
    goto(page, base, "keys")  # the address itself, typed in
    expect(page.get_by_text("Your role (reviewer) cannot open Keys.")).to_be_visible()
    expect(key(page, "key_create_submit")).to_have_count(0)
