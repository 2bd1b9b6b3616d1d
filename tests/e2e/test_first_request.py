"""The very first request a freshly started server answers shows the sign-in page and nothing else.

Streamlit treats a ``pages/`` folder beside the script it runs as an old-style multipage app until
the first ``st.navigation`` call: the first session after a start would then list every page in
the sidebar and could run a page script directly, before anyone signed in. The page scripts sit in
the top-level ``pages/`` and the scripts Streamlit runs in ``admin_ui/entry/``, so this must hold
for the first browser session of a new server process, at any page's address.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.app_utils import goto
from tests.e2e.conftest import start_server, stop_server

pytestmark = pytest.mark.e2e

SIGN_IN_PAGE = "Sign in to agent-memory"


@pytest.mark.parametrize("path", ["records", "grants", ""])
def test_the_first_request_after_a_start_is_the_sign_in_page_with_no_menu(demo_template, tmp_path, page, path):
    proc, base, _, log = start_server(demo_template, tmp_path, demo=False)
    try:
        goto(page, base, path)  # the first browser session this server process has seen
        expect(page.get_by_role("heading", name=SIGN_IN_PAGE)).to_be_visible()
        expect(page.locator('[data-testid="stSidebarNav"]')).to_have_count(0)
        expect(page.get_by_text("Sign in first.")).to_have_count(0)  # no page script ran on its own
        expect(page.locator('[data-testid="stDataFrame"]')).to_have_count(0)
    finally:
        stop_server(proc, log)
