"""Stages are small named objects: each can be stepped alone, and the stage list can be swapped."""

import pytest

from memory_core.retrieve import Pipeline, Retriever, build_request, default_stages
from memory_core.retrieve.ranking import GateStage

from .helpers import write


def _request(service, query):
    return build_request(service.settings.retrieval, agent_id="assistant", user_id="alice", query=query)


def test_stages_can_be_stepped_one_at_a_time_up_to_the_gate(service, alice):
    kept = write(alice, "The user prefers concise technical answers.", attribute="answer_style")
    retriever = service.retriever
    ctx = retriever.context(_request(service, "concise answers"))
    for stage in default_stages():
        ctx = Pipeline.step(stage, ctx)
        if stage.name == "gate":
            break
    assert [s.name for s in ctx.stages][-1] == "gate" and ctx.stages[-1].status == "ran"
    assert [c.record_id for c in ctx.ranking] == [kept]
    assert ctx.stages[-1].outputs["passed"] is True and ctx.stages[-1].outputs["candidates"][0]["id"] == kept
    assert service.store.scalar("SELECT COUNT(*) FROM search_log") == 0  # nothing logged: the log stage never ran


class RefuseEverything:
    """A replacement gate: drops every candidate, with its reason, and ends the search empty."""

    name = "gate"

    def run(self, ctx):
        for cand in list(ctx.ranking):
            ctx.drop(cand, "test gate: refuses everything")
        ctx.ranking = []
        ctx.halt("the test gate refused every candidate")
        return ctx


def test_a_stage_can_be_swapped_and_the_trace_and_log_follow(service, alice):
    write(alice, "The user prefers concise technical answers.", attribute="answer_style")
    stages = [RefuseEverything() if isinstance(s, GateStage) else s for s in default_stages()]
    retriever = Retriever(store=service.store, index=service.index, embedder=service.embedder, clock=service.clock,
                          access=service.access, settings=lambda: service.settings.retrieval, stages=stages)
    response = retriever.search(agent_id="assistant", user_id="alice", query="concise answers")
    assert response.results == [] and response.empty_reason == "the test gate refused every candidate"
    assert response.trace.stage("gate").dropped[0]["reason"] == "test gate: refuses everything"
    assert response.trace.stage("budget").status == "skipped" and response.trace.stage("log_write").status == "ran"
    assert service.load_search(response.search_id).empty_reason == "the test gate refused every candidate"


def test_a_stage_that_drops_without_a_reason_is_refused(service, alice):
    write(alice, "The user prefers concise technical answers.", attribute="answer_style")

    class Sloppy:
        name = "sloppy"

        def run(self, ctx):
            ctx.ranking = ctx.ranking[1:]
            return ctx

    stages = default_stages()
    stages.insert(8, Sloppy())
    retriever = Retriever(store=service.store, index=service.index, embedder=service.embedder, clock=service.clock,
                          access=service.access, settings=lambda: service.settings.retrieval, stages=stages)
    with pytest.raises(AssertionError, match="sloppy dropped"):
        retriever.search(agent_id="assistant", user_id="alice", query="concise answers")
