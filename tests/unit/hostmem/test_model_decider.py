"""The model decider, driven by a real StructuredLLM subclass with queued replies (no network)."""

from __future__ import annotations

import pytest

from memory_core.errors import ExternalServiceError
from memory_core.hostmem import HostMemory, decider_name, decisions_for
from memory_core.service import MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder

from .helpers import QueuedLLM, small_world

DINNER = "Can you suggest something I could cook for dinner tonight?"


def open_with(tmp_path, clock, replies, **host):
    llm = QueuedLLM(replies)
    service = MemoryService.open(tmp_path / "m.sqlite", default_settings(host_memory=host), clock=clock,
                                 embedder=HashingEmbedder(), llm=llm)
    return service, llm, small_world(service)


def ask(service, text=DINNER, project=None):
    session = service.start_session(agent_id="assistant", user_id="alice", project_id=project)
    session.record_turn("user", text)
    return session, HostMemory(service).decide(session, text)


def test_the_model_names_gaps_drafts_and_admits_what_improves_the_draft(tmp_path, clock):
    service, llm, world = open_with(tmp_path, clock, [])
    llm.replies = [
        {"draft": "How about a mushroom risotto with parmesan?", "gaps": ["is the user vegan or does she eat meat and dairy"]},
        {"verdicts": [{"record_id": world["alice_diet"], "improves": True, "reason": "vegan: the draft used parmesan"},
                      {"record_id": "mem_not_shown", "improves": True, "reason": "made up"}]},
    ]
    with service:
        session, decision = ask(service)
        assert decision.decider == "anthropic:claude-haiku-4-5" == decider_name(service)
        assert decision.gaps == ["is the user vegan or does she eat meat and dairy"]
        assert decision.admitted_ids == [world["alice_diet"]]
        (row,) = decisions_for(service, session.id)
        assert row["decider"] == "anthropic:claude-haiku-4-5" and row["message"]
        verdicts = {c["record_id"]: c for c in row["candidates"]}
        assert "improves the draft" in verdicts[world["alice_diet"]]["reason"]
        # what failed the hard checks never reached the model; a verdict on an unknown id is ignored
        compare = llm.requests[1]
        assert compare["schema"] == "CompareReply" and world["alice_diet"] in compare["prompt"]
        assert world["apollo_deploy"] not in compare["prompt"] and "mem_not_shown" not in row["admitted_ids"]
        assert "parmesan" in compare["prompt"], "the comparison is against the model's own draft"


def test_no_gap_means_one_request_and_nothing_issued(tmp_path, clock):
    service, llm, _ = open_with(tmp_path, clock, [{"draft": "Hello!", "gaps": []}])
    with service:
        session, decision = ask(service, "Hi there!")
        assert decision.result is None and len(llm.requests) == 1
        assert "no gap" in decisions_for(service, session.id)[0]["reason"]


def test_a_refusal_by_the_model_issues_nothing(tmp_path, clock):
    service, llm, world = open_with(tmp_path, clock, [])
    llm.replies = [{"draft": "Pasta.", "gaps": ["is the user vegan or does she eat meat and dairy"]},
                   {"verdicts": [{"record_id": world["alice_diet"], "improves": False, "reason": "the draft is vegan already"}]}]
    with service:
        _, decision = ask(service)
        assert decision.admitted_ids == [] and decision.message is None


@pytest.mark.parametrize("failing_call", [0, 1])
def test_a_failing_model_issues_nothing_and_says_why(tmp_path, clock, failing_call):
    service, llm, world = open_with(tmp_path, clock, [])
    replies = [{"draft": "Pasta.", "gaps": ["is the user vegan or does she eat meat and dairy"]}, {"verdicts": []}]
    replies[failing_call] = ExternalServiceError("the Anthropic request timed out", kind="timeout")
    llm.replies = replies
    with service:
        session, decision = ask(service)
        assert decision.admitted_ids == [] and decision.message is None
        row = decisions_for(service, session.id)[0]
        assert "timeout" in row["reason"] or any("timeout" in c["reason"] for c in row["candidates"])


def test_invalid_model_output_issues_nothing(tmp_path, clock):
    service, llm, _ = open_with(tmp_path, clock, ["I think the user is vegan, no JSON here"])
    with service:
        _, decision = ask(service)
        assert decision.admitted_ids == [] and "invalid_output" in decision.reason


def test_the_offline_setting_keeps_the_rules_even_with_a_key(tmp_path, clock):
    service, llm, world = open_with(tmp_path, clock, [], decider="offline")
    with service:
        _, decision = ask(service)
        assert decision.decider == "offline-rules" and llm.requests == []
        assert decision.admitted_ids == [world["alice_diet"]]
