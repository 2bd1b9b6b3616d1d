"""Every result and every response explains itself completely; the trace covers every stage."""

import json
from dataclasses import fields

import pytest

from memory_core.retrieve import ResultExplanation
from memory_core.retrieve.retriever import build_pipeline

from .helpers import search, write

# The design's order, except that dense comes after lexical and entity: the query is embedded on a
# worker thread while those two run (retrieval.overlap_query_embedding, docs/retrieval.md).
DESIGN_ORDER = [
    "rewrite", "scope_resolution", "hard_filter", "time_window", "query_embedding", "lexical", "entity", "dense", "fusion",
    "freshness", "gate", "collapse", "rerank", "budget", "explain", "log_write",
]


def test_the_pipeline_runs_the_design_stages_in_order(service, alice):
    assert build_pipeline().names == DESIGN_ORDER
    write(alice, "The user prefers concise technical answers.", attribute="answer_style")
    response = search(service, alice, "concise answers")
    assert [s.name for s in response.trace.stages] == DESIGN_ORDER
    assert all(s.ms >= 0 for s in response.trace.stages)
    assert set(response.trace.timings()) == set(DESIGN_ORDER)


def test_each_result_explanation_is_complete(make_service, clock):
    service = make_service(freshness_weight=0.5)  # freshness ships off; on, it applies to recency questions
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    alice = service.start_session(agent_id="assistant", user_id="alice")
    write(alice, "The user prefers concise technical answers.", attribute="answer_style", mentions=["Priya"])
    write(alice, "Reviewed concise answer guidelines with Priya.", type="episodic", mentions=["Priya"],
          event_at="2026-02-01T10:00:00Z")
    response = search(service, alice, "latest concise answers Priya")  # a recency question: freshness applies
    assert len(response.results) == 2
    for rank, result in enumerate(response.results, start=1):
        e = result.explanation
        assert e.rank == rank and e.raw_query == "latest concise answers Priya" and e.rewritten_query is None
        assert e.matched_by and set(e.generators) == set(e.matched_by)
        for name, detail in e.generators.items():
            assert detail["rank"] >= 1
        assert e.cosine is not None and e.fused_rank >= 1 and e.fused_score > 0
        assert e.source_kind == "agent_inference" and e.status == "provisional" and e.scope == "user:alice"
        assert e.created_at and e.entity_links and e.gate.startswith("passed: ")
        assert e.collapse.startswith("kept") and e.budget.startswith("fits: ") and e.tokens > 0
        assert e.rerank is None
        json.dumps(e.to_dict())
    episodic = next(r for r in response.results if r.explanation.type == "episodic").explanation
    assert episodic.event_at == "2026-02-01T10:00:00.000000Z"
    assert 0.5 < episodic.freshness["factor"] < 1.0 and episodic.freshness["age_days"] == pytest.approx(32.0, abs=0.01)
    assert {f.name for f in fields(ResultExplanation)} <= set(response.results[0].explanation.to_dict())


def test_the_response_explanation_summarises_every_decision(service, alice):
    write(alice, "The user prefers concise technical answers.", attribute="answer_style")
    response = search(service, alice, "concise answers")
    x = response.explanation
    assert x.raw_query == "concise answers" and x.rewrite_status == "disabled"
    assert set(x.scopes) == {"agent:assistant/alice", "user:alice"}
    assert x.filter["statuses"] == ["provisional", "confirmed"]
    assert set(x.candidates) == {"dense", "lexical", "entity", "fused"}
    assert x.gate["cosine_floor"] == service.settings.retrieval.cosine_floor and "best_cosine" in x.gate
    assert x.rerank == {"status": "disabled"} and x.budget["budget"] == 1500
    assert x.returned == 1 and x.empty_reason is None and x.summary.startswith("1 result(s) from")
    json.dumps(response.to_dict())
    json.dumps(response.to_tool_result())


def test_freshness_is_on_by_default_for_recency_questions_only_and_off_at_weight_0(make_service):
    """Shipped at weight 0.3 for recency questions (issue 31, docs/calibration.md); weight 0 turns it off."""
    off = make_service(freshness_weight=0.0)
    off.grant("assistant", "user:alice", read=True, write=True, actor="t")
    alice = off.start_session(agent_id="assistant", user_id="alice")
    write(alice, "Reviewed concise answer guidelines with Priya.", type="episodic", event_at="2026-02-01T10:00:00Z")
    stage = search(off, alice, "latest answer guidelines").trace.stage("freshness")
    assert stage.status == "skipped" and stage.notes == ["freshness_weight is 0"]
    on = make_service("on.sqlite")
    assert on.settings.retrieval.freshness_weight == 0.3 and on.settings.retrieval.freshness_scope == "recency_questions"
    on.grant("assistant", "user:alice", read=True, write=True, actor="t")
    session = on.start_session(agent_id="assistant", user_id="alice")
    write(session, "Reviewed concise answer guidelines with Priya.", type="episodic", event_at="2026-02-01T10:00:00Z")
    plain = search(on, session, "answer guidelines").trace.stage("freshness")
    assert plain.status == "skipped" and plain.notes == ["the query does not ask about the present or the recent past"]
    recent = search(on, session, "what answer guidelines did we review recently?").trace.stage("freshness")
    assert recent.status == "ran" and recent.inputs["asks_about_recency"] is True and recent.outputs["adjusted"]
