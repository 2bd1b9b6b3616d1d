"""Driving the Streamlit app from Playwright: wait for a run to finish, find widgets by key."""

from __future__ import annotations

import re
import time

from playwright.sync_api import Page, expect

TIMEOUT = 60_000


RUNNING = '[data-testid="stApp"][data-test-script-state="running"]'
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def wait_for_app(page: Page) -> None:
    """Wait until the script run that the last interaction started has finished.

    The run starts a moment after the interaction: wait (briefly) to see it start, then for it
    to end. A run too quick to be seen starting costs the short wait, never a wrong read;
    journeys then wait on the text they expect.
    """
    try:
        page.wait_for_selector(RUNNING, timeout=1_500)
    except Exception:  # noqa: BLE001 - already finished, or the interaction started no run
        pass
    page.wait_for_selector(IDLE, timeout=TIMEOUT)


def goto(page: Page, base_url: str, path: str = "") -> None:
    page.goto(f"{base_url}/{path}")
    page.wait_for_selector('[data-testid="stApp"]', timeout=TIMEOUT)
    wait_for_app(page)


def nav(page: Page, title: str) -> None:
    """Open a page from the sidebar menu (a reload would start a new session and sign out).

    A click that lands while the app is still switching pages on its own (after a sign-in, a role
    without the landing page is sent on to its first page) can be swallowed by that switch: the
    click is repeated, at most twice, when the page's heading has not appeared.
    """
    link = page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title, exact=True)
    heading = page.get_by_role("heading", name=title).first
    for _ in range(2):
        link.click()
        wait_for_app(page)
        try:
            heading.wait_for(state="visible", timeout=10_000)
            return
        except Exception:  # noqa: BLE001 - swallowed click: try again
            pass
    link.click()
    wait_for_app(page)
    expect(heading).to_be_visible(timeout=TIMEOUT)


def key(page: Page, name: str):
    return page.locator(f".st-key-{name}")


def fill(page: Page, name: str, text: str, submit: bool = True) -> None:
    """Type into a text input or area; ``submit`` commits it (outside forms that reruns the app)."""
    box = key(page, name).locator("input, textarea").first
    box.fill(text)
    if submit:
        box.press("Tab")
        wait_for_app(page)


def select(page: Page, name: str, text: str) -> None:
    """Open a selectbox and choose the first option containing ``text``."""
    box = key(page, name).locator('[role="combobox"]').first
    if box.input_value() == text:
        return
    box.click()
    box.fill(text)
    page.locator('[role="option"]').filter(has_text=text).first.click()
    wait_for_app(page)


def click(page: Page, name: str) -> None:
    key(page, name).locator("button").first.click()
    wait_for_app(page)


def check(page: Page, name: str) -> None:
    key(page, name).locator("label").first.click()


def texts(page: Page, testid: str) -> list[str]:
    return page.locator(f'[data-testid="{testid}"]').all_inner_texts()


def table_text(page: Page, name: str) -> str:
    """The text of the cells a dataframe rendered (its accessible table; the grid draws lazily)."""
    cells = key(page, f"{name}_box").locator("td")
    try:
        cells.first.wait_for(state="attached", timeout=15_000)
    except Exception:  # noqa: BLE001 - an empty or missing table
        return ""
    return " ".join(cells.all_text_contents())


def sign_out(page: Page) -> None:
    page.locator(".st-key-signout button").click()
    wait_for_app(page)
    expect(page.get_by_text("Sign in to agent-memory")).to_be_visible(timeout=TIMEOUT)


def sign_in(page: Page, username: str, password: str) -> None:
    fill(page, "signin_username", username, submit=False)
    fill(page, "signin_password", password, submit=False)
    click(page, "signin_submit")


def sign_in_as(page: Page, base_url: str, username: str, password: str) -> None:
    """From a fresh session (the demo operator is signed in automatically): switch account."""
    goto(page, base_url)
    sign_out(page)
    sign_in(page, username, password)
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_text(re.compile(r"· (viewer|reviewer|operator|admin|user)"))).to_be_visible(timeout=TIMEOUT)
    wait_for_app(page)  # a role without the landing page is sent on to its first page: let that run end


def alerts(page: Page) -> list[str]:
    return page.locator('[data-testid="stAlert"]').all_inner_texts()


def eventually(page: Page, condition, timeout_ms: int = 15_000) -> bool:
    """Poll ``condition()`` until true (the data grid redraws a moment after a run ends).

    The limit is wall time, not a count of polls: a condition that itself waits (``table_text`` on a
    grid that never appears waits up to 15 s per call) must not stretch a failing test to minutes."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        page.wait_for_timeout(250)
