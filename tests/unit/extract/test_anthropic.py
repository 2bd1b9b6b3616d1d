import pytest

from memory_core.errors import ExternalServiceError
from memory_core.extract.anthropic import AnthropicExtractor, AnthropicReviewer
from memory_core.extract.base import load_transcript
from memory_core.extract.runner import ExtractionRunner
from tests.unit.extract.helpers import FakeMessagesAPI, ScriptedExtractor, ended_session, facts, records

TURNS = [("user", "I prefer concise answers."), ("assistant", "Will do."), ("user", "I'm flying to Tokyo next Tuesday.")]
EXTRACTION = {
    "candidates": [
        {"type": "semantic", "content": "The user prefers concise answers.", "attribute": "answer_style",
         "evidence": "I prefer concise answers.", "evidence_turn": 0, "source_kind": "user_statement"},
        {"type": "semantic", "content": "The user is flying to Tokyo next Tuesday.", "evidence": "I'm flying to Tokyo next Tuesday.",
         "evidence_turn": 2, "review_at": {"expression": "next Tuesday", "value": "2026-03-10"}},
    ],
    "summary": {"content": "Alice set her answer style and mentioned a Tokyo trip.", "evidence": "I prefer concise answers.", "evidence_turn": 0},
}
ACCEPT = {"verdict": "accept", "reason": "stated plainly"}


def install(service, api: FakeMessagesAPI, *, hosted_extractor: bool = True, hosted_reviewer: bool = True):
    llm = api.llm()
    runner = ExtractionRunner(
        service.extraction_deps(),
        extractor=AnthropicExtractor(llm, timeout_s=20, max_tokens=2000) if hosted_extractor else None,
        reviewer=AnthropicReviewer(llm, timeout_s=10) if hosted_reviewer else None,
    )
    service.extraction = runner
    return runner


def test_extractor_request_carries_the_numbered_transcript(service, alice):
    api = FakeMessagesAPI([EXTRACTION])
    session_id, _ = ended_session(service, TURNS)
    output, info = AnthropicExtractor(api.llm(), timeout_s=20, max_tokens=2000).extract(load_transcript(service.store, session_id))
    request = api.requests[0]
    assert request["model"] == "claude-haiku-4-5" and request["max_tokens"] == 2000
    assert "verbatim" in request["system"] and '"candidates"' in request["system"]  # rules and JSON schema
    prompt = request["messages"][0]["content"]
    assert request["messages"][0]["role"] == "user"
    assert "[turn 2 | user | 2026-03-05T10:02:00.000000Z]" in prompt and "Write targets: personal" in prompt
    assert [c.content for c in output.candidates] == ["The user prefers concise answers.", "The user is flying to Tokyo next Tuesday."]
    assert output.candidates[1].review_at.expression == "next Tuesday"
    assert info["model"] == "claude-haiku-4-5"


def test_invalid_output_and_timeouts_raise_external_service_errors(service, alice):
    session_id, _ = ended_session(service, TURNS)
    transcript = load_transcript(service.store, session_id)
    extractor = AnthropicExtractor(FakeMessagesAPI(["no json here", {"candidates": [{"type": "semantic"}]}, "timeout"]).llm(),
                                   timeout_s=1, max_tokens=500)
    kinds = []
    for _ in range(3):
        with pytest.raises(ExternalServiceError) as raised:
            extractor.extract(transcript)
        kinds.append(raised.value.details["kind"])
    assert kinds == ["invalid_output", "invalid_output", "timeout"]


def test_hosted_extraction_and_review_write_through_the_validator(service, alice):
    api = FakeMessagesAPI([EXTRACTION, ACCEPT, ACCEPT, ACCEPT])
    install(service, api)
    _, run_id = ended_session(service, TURNS)
    detail = service.run_extraction(run_id)
    assert detail.status == "succeeded"
    assert detail.run["extractor"] == "anthropic:claude-haiku-4-5"
    rows = {r["content"]: r for r in facts(service)}
    assert rows["The user prefers concise answers."]["source_kind"] == "user_statement"
    assert rows["The user is flying to Tokyo next Tuesday (2026-03-10)."]["review_at"] == "2026-03-11T00:00:00.000000Z"
    summary = records(service, source_kind="session_summary")[0]
    assert summary["content"] == "Alice set her answer style and mentioned a Tokyo trip."
    review_prompt = api.requests[1]["messages"][0]["content"]
    assert "CANDIDATE (fact)" in review_prompt and "SURROUNDING TURNS" in review_prompt and "RELATED LIVE RECORDS" in review_prompt


def test_reviewer_timeout_leaves_no_partial_writes_and_the_run_is_retried(service, alice, clock):
    api = FakeMessagesAPI([ACCEPT, "timeout"])
    install(service, api, hosted_extractor=False)
    _, run_id = ended_session(service, [("user", "I prefer tea."), ("user", "I live in Oslo.")])
    writes_before = service.store.scalar("SELECT COUNT(*) FROM write_log")
    detail = service.run_extraction(run_id)
    assert detail.status == "queued" and detail.run["attempts"] == 1
    assert "the reviewer's model request timed out. Raise extraction.reviewer_timeout_s" in detail.run["error"]
    assert "Attempt 1 of 5 failed; the next one is due after" in detail.run["error"]
    assert records(service) == []
    assert service.store.scalar("SELECT COUNT(*) FROM write_log") == writes_before
    assert {c["outcome"] for c in detail.candidates} == {"not_written"}
    assert detail.attempts[0]["outcome"] == "failed"
    assert service.run_extraction() is None  # backing off: not claimable yet
    clock.advance(seconds=service.settings.extraction.retry_backoff_s + 1)
    api.replies = [ACCEPT, ACCEPT, ACCEPT]
    detail = service.run_extraction()
    assert detail.run["id"] == run_id and detail.status == "succeeded" and detail.run["attempts"] == 2
    assert sorted(r["content"] for r in facts(service)) == ["The user lives in Oslo.", "The user prefers tea."]
    assert len(records(service, source_kind="session_summary")) == 1


def test_reviewer_invalid_output_fails_closed(service, alice):
    install(service, FakeMessagesAPI(['{"verdict": "maybe", "reason": "unsure"}']), hosted_extractor=False)
    _, run_id = ended_session(service, [("user", "I prefer tea.")])
    detail = service.run_extraction(run_id)
    assert detail.status == "queued" and "the reviewer's model reply was not valid output (verdict: Input should be" in detail.run["error"]
    assert records(service) == []


def test_extractor_failure_writes_nothing_and_spent_attempts_fail_the_run(tmp_path, clock):
    from memory_core import MemoryService, load_settings
    from tests.fakes import HashingEmbedder

    settings = load_settings(extraction={"max_attempts": 2, "retry_backoff_s": 0})
    service = MemoryService.open(tmp_path / "m.sqlite", settings, clock=clock, embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    install(service, FakeMessagesAPI(["timeout", "timeout"]))
    _, run_id = ended_session(service, TURNS)
    assert service.run_extraction(run_id).status == "queued"
    final = service.run_extraction(run_id)
    assert final.status == "failed" and final.run["attempts"] == 2
    assert records(service) == []
    service.close()


def test_reviewer_revision_from_the_model_is_bounded_in_code(service, alice):
    revise = {"verdict": "revise", "reason": "narrower", "revision": {
        "content": "The user prefers tea.", "source_kind": "system", "about": "Bob"}}
    api = FakeMessagesAPI([revise, ACCEPT])
    install(service, api, hosted_extractor=False)
    service.extraction.extractor = ScriptedExtractor([
        {"type": "semantic", "content": "The user prefers green tea in the morning.", "evidence": "green tea in the morning",
         "source_kind": "agent_inference"}])
    _, run_id = ended_session(service, [("assistant", "So green tea in the morning, then.")])
    detail = service.run_extraction(run_id)
    row = facts(service)[0]
    assert row["content"] == "The user prefers tea." and row["source_kind"] == "agent_inference"
    assert row["subject_entity_id"] is not None and "Bob" not in str(detail.candidates[0]["detail"]["validation"])
    assert len(detail.candidates[0]["detail"]["revision"]["overrides"]) == 2
