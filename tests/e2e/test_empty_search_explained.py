"""Issue 27, items 1-4: an engineer debugging an empty search is never misled.

One journey per item, each failing on the code before its fix. Each counts the person's actions
(clicks, choices and typed fields, the sidebar included) in ``Actions``, for the closing note's
"clicks per job"; none waits on a fixed pause.
"""

from __future__ import annotations

import re
import sqlite3

import pytest
from playwright.sync_api import expect

from admin_ui.data.overview import reason_class
from tests.e2e.app_utils import click, eventually, fill, goto, key, nav, select, table_text, wait_for_app

pytestmark = pytest.mark.e2e


class Actions:
    """The app_utils helpers, each call counted as one action of the person."""

    def __init__(self, page) -> None:
        self.page, self.count = page, 0

    def nav(self, title: str) -> None:
        self.count += 1
        nav(self.page, title)

    def select(self, name: str, text: str) -> None:
        self.count += 1
        select(self.page, name, text)

    def fill(self, name: str, text: str, submit: bool = True) -> None:
        self.count += 1
        fill(self.page, name, text, submit)

    def click(self, name: str) -> None:
        self.count += 1
        click(self.page, name)

    def click_locator(self, locator) -> None:
        self.count += 1
        locator.click()
        wait_for_app(self.page)

    def search(self, agent: str, user: str, query: str) -> None:
        self.select("explorer_agent", agent)
        self.select("explorer_user", user)
        self.fill("explorer_query", query, submit=False)
        self.click("explorer_run")


def _searches(store, where: str = "1 = 1") -> int:
    with sqlite3.connect(store) as conn:
        return conn.execute(f"SELECT count(*) FROM search_log WHERE {where}").fetchone()[0]


def test_item1_a_search_without_a_grant_opens_the_filter_that_left_nothing(app_server, page):
    base, _ = app_server
    goto(page, base)
    act = Actions(page)
    act.nav("Search explorer")
    act.search("scheduler", "alice", "When is Alice travelling to Lisbon?")
    reason = key(page, "explorer_empty_reason")
    expect(reason).to_contain_text("0 readable records: agent scheduler has no read grant on user:alice")
    jump = key(page, "explorer_jump").locator("button")
    expect(jump).to_contain_text("3. hard_filter")
    act.click("explorer_jump")
    panel = key(page, "explorer_stage_panel")
    expect(panel).to_contain_text(re.compile(r"Stage 3 of \d+: hard_filter"))
    expect(panel).to_contain_text("Readable records left: 0")
    expect(panel).to_contain_text("0 readable records: agent scheduler has no read grant on user:alice")
    # The stage table's row says it too, instead of a bare "dropped 0".
    assert eventually(page, lambda: "0 readable records: agent scheduler" in table_text(page, "explorer_stage_table"))
    assert act.count == 6, act.count  # sidebar, agent, user, query, Search, the button


def test_item2_the_event_time_window_is_labelled_counted_and_named(app_server, page):
    base, _ = app_server
    goto(page, base)
    act = Actions(page)
    act.nav("Search explorer")
    act.click_locator(page.get_by_text("Filters and flags"))
    expect(page.get_by_text("Event time from", exact=True)).to_be_visible()
    expect(page.get_by_text("Event time to", exact=True)).to_be_visible()
    act.count += 1  # the date field: its year, month and day segments take the digits in turn
    segments = key(page, "explorer_time_from").locator('[role="spinbutton"]')
    segments.first.click()
    page.keyboard.type("20260101")
    page.keyboard.press("Tab")
    expect(key(page, "explorer_time_from").locator("input").first).to_have_value("2026-01-01")
    act.search("coder", "bob", "Lagos")
    reason = key(page, "explorer_empty_reason")
    expect(reason).to_contain_text(re.compile(r"the event-time window \(from 2026-01-01\S* to any\) removed \d+ readable"))
    expect(reason).not_to_contain_text(re.compile(r"^No memory returned: best cosine"))
    act.click("explorer_jump_window")
    assert act.count == 8, act.count  # sidebar, expander, date, agent, user, query, Search, the button
    panel = key(page, "explorer_stage_panel")
    expect(panel).to_contain_text(re.compile(r"Stage 4 of \d+: time_window"))
    expect(panel).to_contain_text(re.compile(r"the window removed \d+"))
    # Without the window the same search says what it said before: only superseded records matched.
    act.count += 1
    segments.last.click()
    for _ in range(12):
        page.keyboard.press("Backspace")
    page.keyboard.press("Tab")
    expect(key(page, "explorer_time_from").locator("input").first).to_have_value("")
    act.click("explorer_run")
    expect(reason).to_contain_text("all 2 candidates filtered as superseded")
    assert act.count == 10, act.count


def test_item3_extractions_own_searches_stay_out_of_the_overview_rates(app_server, page):
    base, store = app_server
    goto(page, base)
    act = Actions(page)
    caption = key(page, "overview_dash_empty_card")
    expect(caption).to_contain_text("searches by agents and people; extraction's own left out")
    before = re.search(r"(\d+) of (\d+) logged searches returned nothing \((\d+%)", caption.inner_text()).groups()
    extraction_before = _searches(store, "origin = 'extraction'")

    act.nav("Extraction")
    with sqlite3.connect(store) as conn:
        session = conn.execute("SELECT r.session_id FROM extraction_runs r JOIN extraction_candidates c ON c.run_id = r.id "
                               "WHERE c.candidate LIKE '%\"kind\":\"fact\"%' ORDER BY r.created_at LIMIT 1").fetchone()[0]
    act.select("extraction_session", session)
    act.click("extraction_trigger")
    expect(page.locator('[data-testid="stAlert"]').filter(has_text=re.compile(r"^Run run_\S+"))).to_be_visible()
    assert eventually(page, lambda: _searches(store, "origin = 'extraction'") > extraction_before, 60_000)

    act.nav("Overview")
    expect(caption).to_contain_text(f"{before[0]} of {before[1]} logged searches returned nothing ({before[2]}; searches by "
                                    "agents and people")
    act.click_locator(key(page, "overview_include_extraction").locator("label"))
    total = _searches(store)
    expect(caption).to_contain_text(re.compile(rf"\d+ of {total} logged searches returned nothing \(\d+%; extraction's own "
                                               "searches included\)"))
    assert act.count == 5, act.count


def test_item4_the_empty_answers_chart_is_readable_and_groups_reasons_by_kind(app_server, page):
    base, store = app_server
    goto(page, base)
    card = key(page, "overview_dash_empty_card")
    plot = card.locator(".main-svg").first
    plot.wait_for(state="visible")
    with sqlite3.connect(store) as conn:
        reasons = [r[0] for r in conn.execute("SELECT empty_reason FROM search_log WHERE result_ids = '[]' "
                                              "AND (origin IS NULL OR origin <> 'extraction')")]
    kinds = {reason_class(r or "") for r in reasons}
    weak = sum(1 for r in reasons if re.match(r"best cosine [\d.]+ < ", r or ""))
    assert weak >= 2  # the demo has several "N < floor N" reasons with different numbers

    y_labels = card.locator("g.ytick text")
    expect(y_labels).to_have_count(len(kinds))
    shown = [" ".join(t.split()) for t in (y_labels.nth(i).evaluate("e => Array.from(e.querySelectorAll('tspan.line'))"
                                                                       ".map(l => l.textContent).join(' ') || e.textContent")
                                             for i in range(len(kinds)))]
    assert "weak match: below the relevance floors" in shown, shown
    bar_text = card.locator("g.point text, g.textpoint text").all_text_contents()
    assert str(weak) in bar_text, bar_text

    # The bars get room (the labels wrap instead of squeezing the plot), every label lies inside the chart
    # card (none off its left edge), and no two x ticks overlap.
    box = card.bounding_box()
    plot_area = card.locator("rect.nsewdrag").first.bounding_box()
    assert plot_area["width"] >= 0.45 * box["width"], (plot_area, box)
    for i in range(len(kinds)):
        label = y_labels.nth(i).bounding_box()
        assert label["x"] >= box["x"] - 1 and label["x"] + label["width"] <= box["x"] + box["width"] + 1, (shown[i], label, box)
    ticks = [t.bounding_box() for t in card.locator("g.xtick text").all()]
    ticks = sorted((t for t in ticks if t), key=lambda t: t["x"])
    for a, b in zip(ticks, ticks[1:]):
        assert a["x"] + a["width"] <= b["x"], (a, b)
