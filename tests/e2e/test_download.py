"""Downloading memory and seeing who reads it, in headless Chromium against a real `streamlit run` over the demo store.

Alice signs in, opens "Download my memory", prepares the file and downloads it through the browser:
the file is in the export format, holds every record of her scope and nothing of anyone else's,
and every latest version the store holds for her is in the file.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.e2e.app_utils import click, eventually, key, sign_in_as, table_text
from tests.e2e.test_journeys import PASSWORDS

pytestmark = pytest.mark.e2e


def test_a_user_downloads_her_own_memory_through_the_browser(app_server, page, tmp_path):
    base, store = app_server
    sign_in_as(page, base, "alice", PASSWORDS["alice"])
    expect(page.get_by_role("heading", name="My memory")).to_be_visible()
    page.get_by_text("Download my memory").click()
    click(page, "download_prepare")
    button = key(page, "download_file_button").get_by_role("button")
    if not button.is_visible():  # the rerun the button started may draw the expander closed again
        page.get_by_text("Download my memory").click()
    expect(button).to_be_visible()
    expect(page.get_by_text("record(s) and 0 session(s) from user:alice")).to_be_visible()
    with page.expect_download() as caught:
        button.click()
    saved = tmp_path / caught.value.suggested_filename
    caught.value.save_as(saved)
    assert saved.name.startswith("agent-memory-alice-")

    lines = [json.loads(line) for line in saved.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["kind"] == "header" and lines[-1]["kind"] == "end"
    records = [line["record"] for line in lines if line["kind"] == "record"]
    assert records and {r["scope"] for r in records} == {"user:alice"}
    assert not [line for line in lines if line["kind"] == "session"]  # a user's file carries no sessions
    with sqlite3.connect(store) as conn:
        stored = {row[0] for row in conn.execute(
            "SELECT id FROM records WHERE scope_kind = 'user' AND scope_id = 'alice' AND superseded_by_id IS NULL"
            " AND status != 'deleted'")}
    assert stored and stored <= {r["id"] for r in records}  # every latest live version of hers
    text = saved.read_text(encoding="utf-8")
    assert "user:bob" not in text and "project:atlas" not in text


def test_a_user_sees_who_reads_her_memory(app_server, page):
    base, _ = app_server
    sign_in_as(page, base, "alice", PASSWORDS["alice"])
    expect(page.get_by_role("heading", name="My memory")).to_be_visible()
    page.get_by_text("Who reads my memory").click()
    assert eventually(page, lambda: "user:alice" in table_text(page, "who_reads_agents"))
    readers = table_text(page, "who_reads_agents")
    assert "assistant" in readers and "user:bob" not in readers
    assert eventually(page, lambda: "Lisbon" in table_text(page, "who_reads_searches"))
    assert "bob" not in table_text(page, "who_reads_searches").lower()
