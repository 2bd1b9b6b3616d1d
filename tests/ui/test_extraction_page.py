"""Extraction page: ended sessions, runs and candidates; triggering is for operators only."""

from tests.ui.conftest import frames_with, service_for


def test_ended_sessions_and_runs_are_listed(open_page):
    at = open_page("extraction.py", "viewer")
    sessions = frames_with(at, "session_id", "turns", "run_status")[0]
    assert {"ses_alice1", "ses_bob1", "ses_sched1"} <= set(sessions["session_id"])
    runs = frames_with(at, "session_id", "attempts", "status")[0]
    assert len(runs) >= 3


def test_a_viewer_cannot_trigger_or_upload(open_page):
    at = open_page("extraction.py", "viewer")
    keys = {b.key for b in at.button}
    assert not keys & {"extraction_trigger", "extraction_upload_run", "extraction_retry"}


def test_an_operator_extracts_an_ended_session_and_sees_each_candidate(open_page):
    at = open_page("extraction.py", "operator")
    at.selectbox(key="extraction_session").select("ses_alice1").run()
    at.button(key="extraction_trigger").click().run()
    assert not at.exception, [e.value for e in at.exception]
    run_id = at.selectbox(key="extraction_run").value
    assert run_id
    detail = service_for(at).extraction_run(run_id)
    assert detail.status == "succeeded"
    candidates = frames_with(at, "verdict", "outcome", "evidence")[0]
    assert len(candidates) == len(detail.candidates) > 0
    assert set(candidates["verdict"]) <= {"accept", "reject", "revise"}
    assert "Please keep answers concise." in set(candidates["evidence"])
    enqueued = service_for(at).store.query_one(
        "SELECT actor FROM events WHERE kind = 'extraction.enqueued' ORDER BY seq DESC LIMIT 1")
    assert enqueued["actor"] == "ui:omar"


def test_an_uploaded_transcript_becomes_a_session_and_is_extracted(open_page):
    at = open_page("extraction.py", "operator")
    at.toggle(key="extraction_add_open").set_value(True).run()
    at.radio(key="extraction_add_source").set_value("Upload a file").run()
    at.selectbox(key="extraction_upload_agent").set_value("assistant")
    at.selectbox(key="extraction_upload_user").set_value("alice")
    at.file_uploader(key="extraction_upload_file").upload(
        "chat.txt", b"user: I moved to Porto last month.\nassistant: Noted, Porto it is.", "text/plain")
    at.run()
    at.button(key="extraction_upload_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    run_id = at.selectbox(key="extraction_run").value
    detail = service_for(at).extraction_run(run_id)
    assert detail.status == "succeeded" and detail.run["trigger"] == "upload"
    assert service_for(at).transcript(detail.run["session_id"])[0]["content"] == "I moved to Porto last month."


def test_a_failed_run_can_be_retried(open_page, ui_store):
    path, _ = ui_store
    import sqlite3

    conn = sqlite3.connect(path)
    run_id = conn.execute("SELECT id FROM extraction_runs WHERE session_id = 'ses_bob1'").fetchone()[0]
    # Test setup: the state a run is left in after its attempts ran out (the runner's own path needs a failing extractor).
    conn.execute("UPDATE extraction_runs SET status = 'failed', attempts = 5, error = 'extractor timed out' WHERE id = ?", (run_id,))
    conn.commit()
    conn.close()
    at = open_page("extraction.py", "operator")
    at.selectbox(key="extraction_runs_status").select("failed").run()
    at.selectbox(key="extraction_run").select(run_id).run()
    assert "extractor timed out" in " ".join(e.value for e in at.error)
    at.button(key="extraction_retry").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert service_for(at).extraction_run(run_id).status == "succeeded"


class FlakyExtractor:
    """Times out once (as a hosted model can), then reads the transcript like the offline extractor."""

    name = "flaky"

    def __init__(self) -> None:
        from memory_core.extract.offline import OfflineExtractor

        self.calls = 0
        self.offline = OfflineExtractor()

    def extract(self, transcript):
        from memory_core.errors import ExternalServiceError

        self.calls += 1
        if self.calls == 1:
            raise ExternalServiceError("the Anthropic request timed out", kind="timeout")
        return self.offline.extract(transcript)


def test_a_run_waiting_after_a_failed_attempt_is_counted_on_the_overview_and_can_be_retried_now(open_page):
    from memory_core.extract.runner import ExtractionRunner

    at = open_page("extraction.py", "operator")
    service = service_for(at)
    service.extraction = ExtractionRunner(service.extraction_deps(), extractor=FlakyExtractor())
    at.selectbox(key="extraction_session").select("ses_alice1").run()
    at.button(key="extraction_trigger").click().run()
    run_id = at.selectbox(key="extraction_run").value
    assert service.extraction_run(run_id).status == "queued"  # no worker in the app: it would wait
    assert "the extractor's model request timed out" in " ".join(e.value for e in at.error)
    retry = at.button(key="extraction_retry")
    assert retry.label.startswith("Retry now")

    overview = open_page("overview.py", "viewer")
    assert any("1 wait for another attempt after a failed one" in w.value for w in overview.warning)

    retry.click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert service.extraction_run(run_id).status == "succeeded"


def plain(markdown: str) -> str:
    return markdown.replace("\\", "")  # md_escape's backslashes


def test_a_pasted_transcript_resolves_its_dates_against_the_day_given(open_page):
    at = open_page("extraction.py", "operator")
    at.toggle(key="extraction_add_open").set_value(True).run()
    at.selectbox(key="extraction_upload_agent").set_value("assistant")
    at.selectbox(key="extraction_upload_user").set_value("alice")
    at.text_area(key="extraction_paste_text").input("user: I'm flying to Tokyo next tuesday\nassistant: Have a good trip!").run()
    assert any("the upload time" in plain(i.value) for i in at.info)  # said before anything is recorded
    at.text_input(key="extraction_add_when").input("2026-02-25").run()
    assert any("the time you gave, 2026-02-25T12:00:00" in plain(i.value) for i in at.info)
    at.button(key="extraction_upload_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    detail = service_for(at).extraction_run(at.selectbox(key="extraction_run").value)
    assert detail.status == "succeeded"
    assert [t["at"][:10] for t in service_for(at).transcript(detail.run["session_id"])] == ["2026-02-25", "2026-02-25"]
    written = [c for c in detail.candidates if c.get("record_id") and "Tokyo" in (c["candidate"].get("content") or "")]
    record = service_for(at).record(written[0]["record_id"])
    assert record.review_at.startswith("2026-03-04") and "(2026-03-03)" in record.content


def test_a_time_in_the_future_or_unreadable_is_refused_before_anything_is_recorded(open_page):
    at = open_page("extraction.py", "operator")
    at.toggle(key="extraction_add_open").set_value(True).run()
    at.text_area(key="extraction_paste_text").input("user: I'm flying to Tokyo next tuesday").run()
    sessions = service_for(at).store.scalar("SELECT COUNT(*) FROM sessions")
    for when, says in (("2030-01-01", "in the future"), ("last week", "must be an ISO-8601")):
        at.text_input(key="extraction_add_when").input(when).run()
        assert any(says in plain(e.value) for e in at.error)
        assert at.button(key="extraction_upload_run").disabled
    assert service_for(at).store.scalar("SELECT COUNT(*) FROM sessions") == sessions
