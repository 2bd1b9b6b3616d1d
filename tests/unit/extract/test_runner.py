import sqlite3

import pytest

from memory_core.extract.runner import ExtractionRunner
from memory_core.text import quote_fold as fold
from tests.unit.extract.helpers import ScriptedExtractor, ScriptedReviewer, ended_session, facts, records


def use(service, **components):
    """Install a runner with the given extractor/reviewer as the service's shared one."""
    runner = ExtractionRunner(service.extraction_deps(), **components)
    service.extraction = runner
    return runner


def test_plain_preference_becomes_a_confirmed_user_statement(service, alice):
    _, run_id = ended_session(service, [("user", "I prefer concise technical answers."), ("assistant", "Noted.")])
    detail = service.run_extraction(run_id)
    assert detail.status == "succeeded"
    rows = facts(service)
    assert [r["content"] for r in rows] == ["The user prefers concise technical answers."]
    assert rows[0]["status"] == "confirmed" and rows[0]["source_kind"] == "user_statement"
    assert rows[0]["evidence"] == "I prefer concise technical answers." and rows[0]["evidence_turn"] == 0
    assert rows[0]["subject"] is not None and rows[0]["attribute"] == "answer_preference"


def test_hedged_or_hypothetical_sentences_yield_no_record(service, alice):
    _, run_id = ended_session(service, [
        ("user", "I think I might move to Berlin next year."), ("assistant", "Interesting."),
        ("user", "If I got the Tokyo job, I'd learn Japanese."), ("assistant", "Good plan."),
        ("user", "Should I switch to Vim?"),
    ])
    detail = service.run_extraction(run_id)
    assert detail.status == "succeeded"
    assert facts(service) == []


def test_a_summary_is_written_for_a_session_with_no_facts(service, alice):
    session_id, run_id = ended_session(service, [("user", "Can you explain how RRF works?"), ("assistant", "Sure...")])
    detail = service.run_extraction(run_id)
    summaries = records(service, source_kind="session_summary")
    assert len(summaries) == 1
    summary = summaries[0]
    assert summary["type"] == "episodic" and summary["status"] == "confirmed"
    assert summary["evidence"] == "Can you explain how RRF works?"
    assert fold(summary["evidence"]) in fold(service.transcript(session_id)[0]["content"])
    assert summary["event_at"] == service.transcript(session_id)[0]["at"]
    assert detail.run["summary_record_id"] == summary["id"]


def test_a_session_with_no_turns_writes_no_summary(service, alice):
    """An MCP session (its server never sees the conversation) ends with no turns: no "ended with no
    turns" record is written for it, and the run still succeeds and says why (issue 25)."""
    _, run_id = ended_session(service, [])
    detail = service.run_extraction(run_id)
    assert detail.status == "succeeded"
    assert records(service) == []
    assert detail.run["summary_record_id"] is None


def test_a_quote_that_is_not_verbatim_is_rejected(service, alice):
    use(service, extractor=ScriptedExtractor([
        {"type": "semantic", "content": "The user prefers short answers.", "evidence": "I like answers that are short", "evidence_turn": 0},
    ]))
    _, run_id = ended_session(service, [("user", "I prefer short answers, please."), ("assistant", "Sure.")])
    detail = service.run_extraction(run_id)
    assert facts(service) == []
    row = detail.candidates[0]
    assert row["outcome"] == "rejected_evidence_not_found" and row["verdict"] is None


def test_a_reviewer_that_strengthens_the_source_kind_is_overridden(service, alice):
    reviewer = ScriptedReviewer(lambda item: {
        "verdict": "revise", "reason": "the user clearly meant it",
        "revision": {"source_kind": "user_statement", "evidence": "I will use Postgres for billing.", "target": "private"},
    })
    use(service, reviewer=reviewer, extractor=ScriptedExtractor([{
        "type": "semantic", "content": "The user uses Postgres for the billing service.",
        "evidence": "you'll be using Postgres for the billing service", "evidence_turn": 1, "source_kind": "agent_inference",
    }]))
    _, run_id = ended_session(service, [("user", "What database for billing?"),
                                        ("assistant", "Then you'll be using Postgres for the billing service.")])
    detail = service.run_extraction(run_id)
    row = facts(service)[0]
    assert row["source_kind"] == "agent_inference" and row["status"] == "provisional"
    assert row["evidence"] == "you'll be using Postgres for the billing service"
    assert row["scope_kind"] == "user" and row["scope_id"] == "alice"
    overrides = detail.candidates[0]["detail"]["revision"]["overrides"]
    assert any("strengthen" in o for o in overrides) and any("evidence" in o for o in overrides) and any("target" in o for o in overrides)


def test_status_follows_the_source_kind_not_reviewer_confidence(service, alice):
    use(service, reviewer=ScriptedReviewer(lambda item: {"verdict": "accept", "reason": "certain", "confidence": 1.0}),
        extractor=ScriptedExtractor([{
            "type": "semantic", "content": "The user uses Postgres for the billing service.",
            "evidence": "you'll be using Postgres for the billing service", "source_kind": "user_statement",
        }]))
    _, run_id = ended_session(service, [("assistant", "So you'll be using Postgres for the billing service.")])
    service.run_extraction(run_id)
    row = facts(service)[0]
    assert (row["source_kind"], row["status"]) == ("agent_inference", "provisional")


def test_reviewer_sees_context_and_related_live_records(service, alice):
    reviewer = ScriptedReviewer()
    use(service, reviewer=reviewer)
    alice.record_turn("user", "I live in Lisbon.")
    alice.call_tool("memory_write", {"type": "semantic", "content": "The user lives in Lisbon.", "attribute": "home_location",
                                     "source_kind": "user_statement", "evidence": "I live in Lisbon."})
    _, run_id = ended_session(service, [("user", "Hello there, friend."), ("assistant", "Hi!"), ("user", "I live in Porto."),
                                        ("assistant", "Nice."), ("user", "Bye now, thanks.")])
    service.run_extraction(run_id)
    fact_item = next(i for i in reviewer.seen if i.kind == "fact")
    assert [t.turn for t in fact_item.context] == [0, 1, 2, 3, 4]
    assert any(r["same_subject"] and r["content"] == "The user lives in Lisbon." for r in fact_item.related)
    assert any(i.kind == "summary" for i in reviewer.seen)


def test_a_correction_later_in_the_session_wins(service, alice):
    _, run_id = ended_session(service, [("user", "I live in Lisbon."), ("assistant", "Nice."),
                                        ("user", "Actually, I live in Porto now."), ("assistant", "Got it.")])
    detail = service.run_extraction(run_id)
    assert [r["content"] for r in facts(service)] == ["The user lives in Porto now."]
    assert [c["outcome"] for c in detail.candidates if c["candidate"]["kind"] == "fact"] == ["corrected_in_run", "created"]


def test_a_correction_in_a_later_session_supersedes(service, alice, clock):
    _, first = ended_session(service, [("user", "I live in Lisbon.")])
    service.run_extraction(first)
    clock.advance(days=3)
    _, second = ended_session(service, [("user", "Update: I moved to Porto.")])
    service.run_extraction(second)
    by_content = {r["content"]: r for r in facts(service)}
    assert by_content["The user lives in Lisbon."]["status"] == "superseded"
    assert by_content["The user moved to Porto."]["status"] == "confirmed"
    assert by_content["The user moved to Porto."]["supersedes_id"] == by_content["The user lives in Lisbon."]["id"]


def test_next_tuesday_is_dated_from_the_turn_and_flagged_when_due(service, alice, clock):
    _, run_id = ended_session(service, [("user", "I'm flying to Tokyo next Tuesday.")], start="2026-03-05T10:00:00Z")
    clock.set("2026-03-20T08:00:00Z")  # extraction runs much later; dates still come from the turn
    service.run_extraction(run_id)
    row = facts(service)[0]
    assert row["content"] == "The user is flying to Tokyo next Tuesday (2026-03-10)."
    assert row["review_at"] == "2026-03-11T00:00:00.000000Z"
    flagged = service.run_maintenance()["review_flagged"]
    assert flagged == [row["id"]]


def test_the_same_inference_in_two_sessions_is_reinforced_then_promoted(service, alice, clock):
    # Issue 11: the agent's own words repeated in a later session are not an independent
    # observation (no self-promotion); the same inference quoting the user is.
    extractor = ScriptedExtractor([{"type": "semantic", "content": "The user uses Postgres for the billing service.",
                                    "evidence": "using Postgres for the billing service", "source_kind": "agent_inference"}])
    use(service, extractor=extractor)
    turn = [("assistant", "So you'll be using Postgres for the billing service.")]
    _, first = ended_session(service, turn)
    service.run_extraction(first)
    row = facts(service)[0]
    assert row["status"] == "provisional" and row["expires_at"] == "2026-04-04T10:00:00.000000Z"
    clock.advance(days=10)
    _, second = ended_session(service, turn)
    detail = service.run_extraction(second)
    assert detail.candidates[0]["outcome"] == "reinforced"
    row = facts(service)[0]
    assert len(facts(service)) == 1
    assert (row["status"], row["observations"]) == ("provisional", 1)
    clock.advance(days=1)
    _, third = ended_session(service, [("user", "Yes, we're using Postgres for the billing service.")])
    service.run_extraction(third)
    row = facts(service)[0]
    assert (row["status"], row["observations"], row["expires_at"]) == ("confirmed", 2, None)
    assert row["confidence"] > 0.5


def test_reinforcement_below_the_promotion_count_extends_expiry(tmp_path, clock):
    from memory_core import MemoryService, load_settings
    from tests.fakes import HashingEmbedder

    settings = load_settings(write={"promote_after_observations": 3})
    service = MemoryService.open(tmp_path / "m.sqlite", settings, clock=clock, embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    use(service, extractor=ScriptedExtractor([{"type": "semantic", "content": "The user uses Postgres for billing.",
                                               "evidence": "Postgres for billing", "source_kind": "agent_inference"}]))
    service.run_extraction(ended_session(service, [("assistant", "Postgres for billing it is.")])[1])
    clock.advance(days=20)
    service.run_extraction(ended_session(service, [("user", "Postgres for billing it is.")])[1])
    row = facts(service)[0]
    assert (row["status"], row["observations"]) == ("provisional", 2)
    assert row["expires_at"] == "2026-04-24T10:00:00.000000Z"  # 30 days after the reinforcement, not creation
    service.close()


def test_one_bad_candidate_does_not_sink_the_run(service, alice):
    use(service, reviewer=ScriptedReviewer(), extractor=ScriptedExtractor([
        {"type": "semantic", "content": "The user lives in Lisbon.", "evidence": "I live in Lisbon."},
        {"type": "semantic", "content": "Atlas ships in April.", "evidence": "I live in Lisbon.", "target": "nowhere"},
        {"type": "procedural", "content": "Deploy with make.", "evidence": "I live in Lisbon.", "attribute": "deploy"},
    ]))
    _, run_id = ended_session(service, [("user", "I live in Lisbon.")])
    detail = service.run_extraction(run_id)
    outcomes = [c["outcome"] for c in detail.candidates]
    assert outcomes == ["created", "rejected_target", "rejected_type", "created"]
    assert len(facts(service)) == 1


def test_a_write_refused_by_the_write_path_is_rolled_back_alone(service, clock):
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    service.grant("assistant", "project:atlas", read=True, write=True, actor="test")
    use(service, reviewer=ScriptedReviewer(), extractor=ScriptedExtractor([
        {"type": "semantic", "content": "Atlas uses SQLite.", "evidence": "Atlas uses SQLite", "target": "current_project"},
        {"type": "semantic", "content": "The user lives in Lisbon.", "evidence": "I live in Lisbon."},
    ]))
    _, run_id = ended_session(service, [("user", "Atlas uses SQLite. I live in Lisbon.")], project_id="atlas")
    detail = service.run_extraction(run_id)
    assert [c["outcome"] for c in detail.candidates[:2]] == ["rejected_write", "created"]
    assert detail.candidates[0]["detail"]["write_error"]["code"] == "invalid_input"
    assert [r["content"] for r in facts(service)] == ["The user lives in Lisbon."]


def test_the_run_log_shows_every_stage_and_candidate(service, alice):
    _, run_id = ended_session(service, [("user", "I prefer tea. Should I try coffee?")])
    detail = service.extraction_run(service.run_extraction(run_id).run["id"])
    for stage in ("transcript_preparation", "extractor", "evidence_check", "review", "candidate_validation",
                  "candidate_writes", "summary_write", "total"):
        assert stage in detail.run["stages"]
    attempt = detail.attempts[0]
    assert attempt["outcome"] == "succeeded" and attempt["detail"]["transcript"]["turns"] == 1
    assert attempt["detail"]["counts"] == {"proposed": 1, "accepted": 1, "rejected": 0, "written": 1, "created": 1, "reinforced": 0}
    assert "duplicate_and_contradiction_checks_ms" in attempt["detail"]
    assert attempt["detail"]["extractor"]["skipped"][0]["reason"] == "question"
    fact = detail.candidates[0]
    assert fact["verdict"] == "accept" and fact["outcome"] == "created"
    assert fact["detail"]["validation"]["source_kind"] == "user_statement"
    assert "ms" in fact["detail"]["write"]
    assert [e["kind"] for e in detail.events] == ["extraction.enqueued", "extraction.claimed", "extraction.succeeded"]
    frame = detail.to_dataframe()
    assert list(frame["outcome"]) == ["created", "created"]
    assert "<table>" in detail._repr_html_()
    listed = service.extraction_runs()
    assert listed[0]["id"] == run_id and listed[0]["written"] == 2


def test_an_uploaded_transcript_is_extracted(service, clock):
    service.grant("assistant", "user:carol", read=True, write=True, actor="test")
    detail = service.extract_transcript(agent_id="assistant", user_id="carol", turns=[
        {"role": "user", "content": "I'm a researcher at Northwind.", "at": "2026-02-01T09:00:00Z"},
        {"role": "assistant", "content": "Welcome!", "at": "2026-02-01T09:00:05Z"},
    ])
    assert detail.status == "succeeded" and detail.run["trigger"] == "upload"
    assert [r["content"] for r in facts(service)] == ["The user is a researcher at Northwind."]


def test_rerunning_a_session_keeps_a_single_summary(service, alice):
    session_id, run_id = ended_session(service, [("user", "I prefer tea.")])
    service.run_extraction(run_id)
    again = service.enqueue_extraction(session_id, actor="test")
    detail = service.run_extraction(again)
    assert len(records(service, source_kind="session_summary")) == 1
    assert [c["outcome"] for c in detail.candidates] == ["reinforced", "kept_existing"]


def test_summary_falls_back_when_the_proposed_quote_is_not_verbatim(service, alice):
    use(service, extractor=ScriptedExtractor([], summary={"content": "Alice asked about tea.", "evidence": "tea please!!"}))
    _, run_id = ended_session(service, [("user", "Could you recommend a green tea?")])
    detail = service.run_extraction(run_id)
    summary = records(service, source_kind="session_summary")[0]
    assert summary["evidence"] == "Could you recommend a green tea?"
    assert "summary_fallback" in detail.attempts[0]["detail"]


def test_enqueue_refuses_an_open_session(service, alice):
    from memory_core.errors import ConflictError

    with pytest.raises(ConflictError):
        service.enqueue_extraction(alice.id, actor="test")


def test_a_crash_during_the_writes_rolls_back_every_write_of_the_attempt(service, alice, clock):
    from memory_core.ingest.writer import Ingestor

    class CrashOnSummary(Ingestor):
        def write(self, req, access):
            if req.source_kind == "session_summary":
                raise sqlite3.OperationalError("database or disk is full")  # what SQLite raises then
            return super().write(req, access)

    healthy = service.ingestor
    service.ingestor = CrashOnSummary(service.store, service.index, service.embedder, service.judge, service.settings.write, clock)
    _, run_id = ended_session(service, [("user", "I prefer tea."), ("user", "I live in Oslo.")])
    version = service.store.records_version()
    detail = service.run_extraction(run_id)
    assert detail.status == "queued" and "store was busy or unreachable during writes (OperationalError: database or disk is full)" in detail.run["error"]
    assert records(service) == [] and service.store.scalar("SELECT COUNT(*) FROM write_log") == 0
    assert service.store.records_version() == version and service.index.count() == 0
    assert [c["outcome"] for c in detail.candidates] == ["rolled_back", "rolled_back"]
    assert all(c["record_id"] is None for c in detail.candidates)
    service.ingestor = healthy
    clock.advance(seconds=service.settings.extraction.retry_backoff_s)
    assert service.run_extraction(run_id).status == "succeeded"
    assert len(facts(service)) == 2 and service.index.count() == 3
