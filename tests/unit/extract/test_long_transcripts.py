"""Issue 24, item 12: a transcript of any length extracts (in parts) or fails with a reason a person can act on.

On main an 850-fact transcript ended every attempt in a raw pydantic ValidationError (850 candidates
against a limit of 100), the run stayed queued, and the overview counted no failure.
"""

import json

from hypothesis import given, settings as hsettings, strategies as st

from memory_core import MemoryService, load_settings
from memory_core.clock import parse_ts
from memory_core.extract.anthropic import AnthropicExtractor
from memory_core.extract.candidates import Transcript, Turn
from memory_core.extract.runner import ExtractionRunner
from memory_core.store.overview import review_queue_sizes
from tests.fakes import HashingEmbedder
from tests.unit.extract.helpers import CutOff, FakeMessagesAPI, ScriptedReviewer, ended_session, facts

AT = parse_ts("2026-03-05T10:00:00Z")


def open_service(tmp_path, clock, **extraction):
    service = MemoryService.open(tmp_path / "m.sqlite", load_settings(extraction=extraction), clock=clock,
                                 embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    return service


def candidate(turn: int, n: int) -> dict:
    return {"type": "semantic", "content": f"The user uses tool{n}.", "evidence": f"I use tool{n}.", "evidence_turn": turn,
            "source_kind": "user_statement"}


def test_a_transcript_with_850_facts_is_extracted_in_parts_by_the_offline_extractor(tmp_path, clock):
    service = open_service(tmp_path, clock)
    turns = [t for n in range(850) for t in ({"role": "user", "content": f"I use tool{n}."}, {"role": "assistant", "content": "Noted."})]
    detail = service.extract_transcript(agent_id="assistant", user_id="alice", turns=turns)
    assert detail.status == "succeeded", detail.run["error"]
    attempt = detail.attempts[-1]["detail"]
    assert attempt["counts"]["proposed"] == 850 and attempt["counts"]["written"] == 850
    assert "dropped_over_limit" not in attempt
    parts = attempt["extractor"]["parts"]
    assert len(parts) > 1 and all(p["candidates"] <= service.settings.extraction.max_candidates for p in parts)
    assert sum(p["candidates"] for p in parts) == 850
    assert sorted(r["content"] for r in facts(service)) == sorted(f"The user uses tool{n}." for n in range(850))
    assert len([r for r in service.store.query("SELECT id FROM records WHERE source_kind = 'session_summary'")]) == 1
    service.close()


def test_one_very_long_turn_is_read_in_windows_and_every_quote_stays_verbatim(tmp_path, clock):
    service = open_service(tmp_path, clock)
    filler = "The weather was grey and the meeting ran long. " * 400  # about 19,000 characters
    text = "I live in Oslo. " + filler + "I work at Umbrella. " + filler + "I prefer tea."
    session_id, run_id = ended_session(service, [("user", text)])
    detail = service.run_extraction(run_id)
    assert detail.status == "succeeded", detail.run["error"]
    parts = detail.attempts[-1]["detail"]["extractor"]["parts"]
    assert len(parts) >= 3 and all(p["part"].startswith("turn 0, characters ") for p in parts)
    contents = sorted(r["content"] for r in facts(service))
    assert contents == ["The user lives in Oslo.", "The user prefers tea.", "The user works at Umbrella."]
    assert all(r["evidence"] in text for r in facts(service))
    service.close()


TEXT = st.text(alphabet=st.sampled_from(list("ab .!?\n")), max_size=3000)


@hsettings(max_examples=60, deadline=None)
@given(contents=st.lists(TEXT, min_size=1, max_size=12), max_chars=st.integers(500, 4000))
def test_parts_cover_every_turn_in_order_exactly_once_and_stay_within_the_limit(contents, max_chars):
    from memory_core.extract.parts import MIN_SPLIT_CHARS, TURN_OVERHEAD, plan_parts

    transcript = Transcript("s", "a", "u", None, {}, AT, [Turn(i, "user", c, AT) for i, c in enumerate(contents)])
    parts = plan_parts(transcript, max_chars)
    rebuilt: dict[int, str] = {}
    order = []
    for part in parts:
        assert part.chars <= max_chars or (len(part.turns) == 1 and len(part.turns[0].content) + TURN_OVERHEAD <= max(max_chars, MIN_SPLIT_CHARS + TURN_OVERHEAD))
        for turn in part.turns:
            rebuilt[turn.turn] = rebuilt.get(turn.turn, "") + turn.content
            order.append(turn.turn)
    assert rebuilt == dict(enumerate(contents))
    assert order == sorted(order)
    for part in parts:  # splitting again keeps the text too
        halves = part.split()
        if halves:
            assert "".join(t.content for h in halves for t in h.turns) == "".join(t.content for t in part.turns)


def hosted_runner(service, api, **extractor_args):
    runner = ExtractionRunner(service.extraction_deps(), extractor=AnthropicExtractor(api.llm(), timeout_s=5, max_tokens=1000, **extractor_args),
                              reviewer=ScriptedReviewer())
    service.extraction = runner
    return runner


def test_a_model_reply_with_too_many_candidates_is_split_and_asked_again(tmp_path, clock):
    service = open_service(tmp_path, clock, max_candidates=80)
    turns = [("user", f"I use tool{n}.") for n in range(150)]
    too_many = {"candidates": [candidate(n, n) for n in range(150)]}  # against a bound of 80 per reply
    first = {"candidates": [candidate(n, n) for n in range(75)]}
    second = {"candidates": [candidate(n, n) for n in range(75, 150)]}
    api = FakeMessagesAPI([too_many, first, second])
    hosted_runner(service, api)
    _, run_id = ended_session(service, turns)
    detail = service.run_extraction(run_id)
    assert detail.status == "succeeded", detail.run["error"]
    assert len(api.requests) == 3
    halves = [r["messages"][0]["content"] for r in api.requests[1:]]
    assert "This is one part of a long session (turns 0-74 of 150)" in halves[0] and "[turn 74 |" in halves[0]
    assert "(turns 75-149 of 150)" in halves[1] and "[turn 74 |" not in halves[1]
    assert len(facts(service)) == 150
    service.close()


def test_a_reply_cut_at_the_token_limit_is_split_and_asked_again(tmp_path, clock):
    service = open_service(tmp_path, clock)
    api = FakeMessagesAPI([CutOff('{"candidates": [{"type": "sem'), {"candidates": [candidate(0, 0)]},
                           {"candidates": [candidate(1, 1)]}])
    hosted_runner(service, api)
    _, run_id = ended_session(service, [("user", "I use tool0."), ("user", "I use tool1.")])
    detail = service.run_extraction(run_id)
    assert detail.status == "succeeded", detail.run["error"]
    assert len(api.requests) == 3 and sorted(r["content"] for r in facts(service)) == ["The user uses tool0.", "The user uses tool1."]
    service.close()


def test_invalid_model_output_fails_with_a_readable_reason_and_is_marked_failed_after_its_attempts(tmp_path, clock):
    service = open_service(tmp_path, clock, max_attempts=2, retry_backoff_s=0)
    broken = json.dumps({"candidates": [{"type": "semantic", "content": "x"}]})  # no evidence
    api = FakeMessagesAPI([broken, broken])
    hosted_runner(service, api)
    _, run_id = ended_session(service, [("user", "I prefer tea.")])
    detail = service.run_extraction(run_id)
    assert detail.status == "queued"
    error = detail.run["error"]
    assert error.startswith("the extractor's model reply was not valid output (candidates.0.evidence: Field required)")
    assert "Attempt 1 of 2 failed" in error and "ValidationError" not in error
    assert review_queue_sizes(service.store)["failed_extractions"] == 0
    detail = service.run_extraction()
    assert detail.run["id"] == run_id and detail.status == "failed" and detail.run["attempts"] == 2
    assert "That was the last of its 2 attempts (extraction.max_attempts)" in detail.run["error"]
    assert review_queue_sizes(service.store)["failed_extractions"] == 1
    assert service.run_extraction() is None  # not retried for ever
    assert [e["kind"] for e in detail.events][-2:] == ["extraction.claimed", "extraction.failed"]
    service.close()


class BrokenExtractor:
    """An extractor with a bug: the same input fails the same way every time."""

    name = "broken"

    def extract(self, transcript):
        raise TypeError("unsupported operand type(s) for +: 'int' and 'str'")


def test_a_failure_another_attempt_cannot_cure_marks_the_run_failed_at_once(tmp_path, clock):
    service = open_service(tmp_path, clock)
    service.extraction = ExtractionRunner(service.extraction_deps(), extractor=BrokenExtractor())
    _, run_id = ended_session(service, [("user", "I prefer tea.")])
    detail = service.run_extraction(run_id)
    assert detail.status == "failed" and detail.run["attempts"] == 1
    assert detail.run["error"].startswith("an internal error in extractor (TypeError: unsupported operand")
    assert "Not retried automatically." in detail.run["error"] and "Use Retry once the cause is fixed" in detail.run["error"]
    assert detail.attempts[-1]["detail"]["retryable"] is False
    assert review_queue_sizes(service.store)["failed_extractions"] == 1
    service.close()
