"""Stages are small named objects: each can be stepped alone, and the stage list can be swapped."""

from dataclasses import dataclass

import pytest

from memory_core.retrieve import Candidate, Pipeline, Retriever, SearchRequest, StageContractError, default_stages
from memory_core.retrieve.gate import GateStage

from .helpers import write


def _request(service, query):
    return SearchRequest(agent_id="assistant", user_id="alice", query=query).checked(service.settings.retrieval)


def test_stages_can_be_stepped_one_at_a_time_up_to_the_gate(service, alice):
    kept = write(alice, "The user prefers concise technical answers.", attribute="answer_style")
    run = service.retriever.start(_request(service, "concise answers"))
    for stage in default_stages():
        Pipeline.step(stage, run)
        if stage.name == "gate":
            break
    assert [s.name for s in run.stages][-1] == "gate" and run.stages[-1].status == "ran"
    assert [c.record_id for c in run.handoffs["ranking"]] == [kept]
    assert run.stages[-1].outputs["passed"] is True and run.stages[-1].outputs["candidates"][0]["id"] == kept
    assert service.store.scalar("SELECT COUNT(*) FROM search_log") == 0  # nothing logged: the log stage never ran


class RefuseEverything:
    """A replacement gate: drops every candidate, with its reason, and ends the search empty. It
    writes what the gate writes, since later stages read it."""

    name = "gate"

    @dataclass(slots=True)
    class Inputs:
        ranking: list[Candidate]

    @dataclass(slots=True)
    class Outputs:
        ranking: list[Candidate]
        gate: dict
        floors_deferred: bool
        empty_reason: str | None

    def run(self, given, rec, deps):
        for cand in given.ranking:
            rec.drop(cand, "test gate: refuses everything")
        return self.Outputs([], {"decision": "refused by the test gate"}, False, "the test gate refused every candidate")


def _retriever(service, stages):
    return Retriever(store=service.store, index=service.index, embedder=service.embedder, clock=service.clock,
                     access=service.access, settings=lambda: service.settings.retrieval, stages=stages)


def test_a_stage_can_be_swapped_and_the_trace_and_log_follow(service, alice):
    write(alice, "The user prefers concise technical answers.", attribute="answer_style")
    stages = [RefuseEverything() if isinstance(s, GateStage) else s for s in default_stages()]
    response = _retriever(service, stages).search(agent_id="assistant", user_id="alice", query="concise answers")
    assert response.results == [] and response.empty_reason == "the test gate refused every candidate"
    assert response.trace.stage("gate").dropped[0]["reason"] == "test gate: refuses everything"
    assert response.trace.stage("budget").status == "skipped" and response.trace.stage("log_write").status == "ran"
    assert response.explanation.gate == {"decision": "refused by the test gate"}
    assert service.load_search(response.search_id).empty_reason == "the test gate refused every candidate"


class Sloppy:
    name = "sloppy"

    @dataclass(slots=True)
    class Inputs:
        ranking: list[Candidate]

    @dataclass(slots=True)
    class Outputs:
        ranking: list[Candidate]

    def run(self, given, rec, deps):
        return self.Outputs(given.ranking[1:])  # drops a candidate without rec.drop


def test_a_stage_that_drops_without_a_reason_is_refused(service, alice):
    write(alice, "The user prefers concise technical answers.", attribute="answer_style")
    stages = default_stages()
    stages.insert(stages.index(next(s for s in stages if s.name == "fusion")) + 1, Sloppy())
    with pytest.raises(StageContractError, match="sloppy dropped"):
        _retriever(service, stages).search(agent_id="assistant", user_id="alice", query="concise answers")
    # the failed search is still logged, with the stages it got through
    row = service.store.query_one("SELECT empty_reason FROM search_log")
    assert row["empty_reason"].startswith("search failed: StageContractError: stage sloppy dropped")
