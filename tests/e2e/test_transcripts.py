"""In the browser: an operator pastes a transcript, says when the conversation happened, and 'next
tuesday' resolves against that day; a failed run shows its reason on the overview and the extraction
page, and Retry runs it again."""

from __future__ import annotations

import re
import shutil

import pytest
from playwright.sync_api import expect

from tests.e2e.app_utils import click, fill, goto, key, nav, select, wait_for_app
from tests.e2e.conftest import start_server, stop_server
from tests.e2e.test_journeys import db_row

pytestmark = pytest.mark.e2e

REFUSAL = "the hosted extractor refused the request: invalid API key (401)"


class RefusingExtractor:
    """A hosted extractor whose key was refused: an error another attempt cannot cure, so the run fails at once."""

    name = "refusing"

    def extract(self, transcript):
        from memory_core.errors import ExternalServiceError

        raise ExternalServiceError(REFUSAL, kind="auth")


def fail_one_run(store) -> str:
    """Record a short session whose extraction fails, as it would with a revoked model key."""
    from memory_core import FixedClock, MemoryService, load_settings
    from memory_core.extract.runner import ExtractionRunner
    from memory_core.store.db import Store

    probe = Store.open(store, "2026-01-01T00:00:00Z")
    now = probe.get_meta("demo_now")
    probe.close()
    with MemoryService.open(store, load_settings(), clock=FixedClock(now)) as service:
        service.extraction = ExtractionRunner(service.extraction_deps(), extractor=RefusingExtractor())
        detail = service.extract_transcript(agent_id="assistant", user_id="alice", actor="ui:demo-operator",
                                            turns=[{"role": "user", "content": "I prefer window seats on long flights."}])
        assert detail.status == "failed", detail.run
        return detail.run["id"]


@pytest.fixture(scope="module")
def failed_run_server(demo_template, tmp_path_factory):
    work = tmp_path_factory.mktemp("transcripts")
    template = work / "template.sqlite"
    shutil.copy(demo_template, template)
    run_id = fail_one_run(template)
    (work / "server").mkdir()
    proc, base, store, log = start_server(template, work / "server", demo=True)
    yield base, store, run_id
    stop_server(proc, log)


def test_a_pasted_transcript_resolves_next_tuesday_against_the_day_given(failed_run_server, page):
    base, store, _ = failed_run_server
    goto(page, base)
    nav(page, "Extraction")
    key(page, "extraction_add_open").locator("label").first.click()
    wait_for_app(page)
    select(page, "extraction_upload_agent", "assistant")
    select(page, "extraction_upload_user", "alice")
    fill(page, "extraction_paste_text", "user: I'm flying to Tokyo next tuesday\nassistant: Have a good trip!")
    # Before anything is recorded, the page says what "next tuesday" will be read against.
    expect(page.get_by_text(re.compile(r"2 turns read\. Relative dates resolve against the upload time, 2026-04-20"))).to_be_visible()
    fill(page, "extraction_add_when", "2026-04-15")  # a Wednesday: "next tuesday" is 21 April
    expect(page.get_by_text(re.compile(r"resolve against the time you gave, 2026-04-15T12:00"))).to_be_visible()
    click(page, "extraction_upload_run")
    expect(page.get_by_text(re.compile(r"Run run_\w+ succeeded"))).to_be_visible()
    expect(page.get_by_text(re.compile("Relative dates resolve against the time you gave, 2026-04-15T12:00")).first).to_be_visible()
    row = db_row(store, "SELECT r.content, r.review_at, r.source_kind, r.evidence_session_id FROM records r "
                        "WHERE r.content LIKE '%flying to Tokyo next tuesday%' AND r.status = 'confirmed' "
                        "ORDER BY r.created_at DESC, r.seq DESC")
    assert row["review_at"].startswith("2026-04-22T00:00:00") and "(2026-04-21)" in row["content"]
    turn = db_row(store, "SELECT at FROM turns WHERE session_id = ? AND turn = 0", (row["evidence_session_id"],))
    assert turn["at"].startswith("2026-04-15T12:00:00")


def test_a_failed_run_shows_why_on_the_overview_and_is_retried(failed_run_server, page):
    base, store, run_id = failed_run_server
    failed = db_row(store, "SELECT COUNT(*) AS n FROM extraction_runs WHERE status = 'failed'")["n"]
    assert failed >= 1  # this one (the demo may hold others)
    goto(page, base)
    nav(page, "Overview")
    expect(page.get_by_text(re.compile(rf"\b{failed} extraction run\(s\) failed"))).to_be_visible()
    nav(page, "Extraction")
    expect(page.get_by_text(re.compile(rf"\b{failed} failed run\(s\)"))).to_be_visible()
    select(page, "extraction_runs_status", "failed")
    select(page, "extraction_run", run_id)
    expect(page.get_by_text(REFUSAL).first).to_be_visible()
    click(page, "extraction_retry")
    expect(page.get_by_text(re.compile(f"Run {run_id} succeeded"))).to_be_visible()
    assert db_row(store, "SELECT status FROM extraction_runs WHERE id = ?", (run_id,))["status"] == "succeeded"
    assert db_row(store, "SELECT COUNT(*) AS n FROM records WHERE content LIKE '%window seats%'")["n"] >= 1
