"""Every retrieval stage of ``default_stages`` runs alone on a hand-built input (``run_stage``):
what it declares it reads is all it gets, and what it writes is checked against its declaration.

Stages that only compute (fusion, freshness, the gate on a passing or historical search,
explanation) run with no services at all; the others get a real retriever over a small store.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memory_core.policy.grants import ScopeAccess
from memory_core.retrieve import Candidate, SearchRequest, default_stages, run_stage
from memory_core.retrieve.budget import BudgetStage
from memory_core.retrieve.collapse import CollapseStage
from memory_core.retrieve.explain import ExplainStage
from memory_core.retrieve.filters import HardFilter, HardFilterStage, ScopeStage, allowed_count, index_mask
from memory_core.retrieve.freshness import FreshnessStage
from memory_core.retrieve.fuse import FusionStage
from memory_core.retrieve.gate import GateStage
from memory_core.retrieve.generate import DenseStage, EntityStage, LexicalStage, PendingVector, QueryEmbeddingStage
from memory_core.retrieve.rerank import RerankStage
from memory_core.retrieve.rewrite import QueryRewriter, RewriteStage
from memory_core.retrieve.search_log import LogStage, load_search
from memory_core.retrieve.window import TimeWindowStage
from memory_core.settings import default_settings

from .helpers import write

SETTINGS = default_settings().retrieval
AT = "2026-03-05T10:00:00Z"


def _request(query="what does the user drink?", **options):
    return SearchRequest(agent_id="assistant", user_id="alice", query=query, **options).checked(SETTINGS)


def _filter(**changes):
    flt = HardFilter(scopes=("agent:assistant/alice", "user:alice"), statuses=("provisional", "confirmed"), types=None,
                     event_from=None, event_to=None, now=AT, include_lapsed=False)
    return HardFilter(**{**flt.__dict__, **changes})


def _cand(seq, record_id=None, **signals):
    return Candidate(seq=seq, record_id=record_id or f"mem_{seq}", type=signals.pop("type", "semantic"), status="confirmed",
                     scope="user:alice", created_at=signals.pop("created_at", AT), **signals)


def _by_id(service, record_id):
    return service.store.query_one("SELECT seq, id FROM records WHERE id = ?", (record_id,))


class QueuedModel:
    """A language model that returns queued replies (the rewrite role's client)."""

    def __init__(self, *queries):
        self.queries = list(queries)

    def ask(self, *, system, prompt, schema, max_tokens, timeout):
        return schema(query=self.queries.pop(0))


@dataclass
class RewriterOnly:
    model: QueuedModel

    def rewriter(self, settings):
        return QueryRewriter(self.model, settings.rewrite_timeout_s, settings.max_query_chars)


def test_rewrite_alone():
    out, trace = run_stage(RewriteStage(), RewriterOnly(QueuedModel("Lisbon trip plans")),
                           request=_request("what did I say about it?", rewrite=True, context="user: the Lisbon trip"),
                           settings=SETTINGS)
    assert (out.query, out.rewritten_query, out.rewrite_status) == ("Lisbon trip plans", "Lisbon trip plans", "rewritten")
    off, trace = run_stage(RewriteStage(), None, request=_request(), settings=SETTINGS)
    assert off.query == "what does the user drink?" and off.rewrite_status == "disabled" and trace.status == "skipped"


def test_scope_resolution_alone(service):
    service.grant("assistant", "user:alice", read=True, write=False, actor="t")
    out, trace = run_stage(ScopeStage(), service.retriever, request=_request())
    assert "user:alice" in out.access.readable_keys and out.empty_reason is None
    stranger, trace = run_stage(ScopeStage(), NothingReadable(), request=_request())
    assert stranger.empty_reason == "no readable scopes" and trace.outputs == {"readable": {}, "ignored": {"user:bob": "revoked"}}


class NothingReadable:
    """An access resolver under which the principal reads nothing (a host's own policy)."""

    def access(self, agent_id, user_id):
        return ScopeAccess(agent_id, user_id, readable={}, writable={}, ignored={"user:bob": "revoked"})


def test_hard_filter_alone(service, alice):
    write(alice, "The user drinks tea.", attribute="drink")
    out, trace = run_stage(HardFilterStage(), service.retriever, request=_request(types=["semantic"]),
                           access=service.access("assistant", "alice"), at=AT)
    assert out.filter.types == ("semantic",) and out.filter.now == AT and int(out.mask.sum()) == 1
    assert trace.outputs["indexed_rows_allowed"] == 1


def test_time_window_alone(service, alice):
    write(alice, "Flew to Lagos for the conference.", type="episodic", event_at="2025-03-01T10:00:00Z")
    write(alice, "Walked the dog in the park.", type="episodic", event_at="2026-03-01T10:00:00Z")
    access = service.access("assistant", "alice")
    flt = _filter(event_from="2026-01-01T00:00:00Z")
    mask = index_mask(service.index, flt, [])
    assert allowed_count(mask) == 1  # (the premise: the hand-built filter admits the 2026 walk alone)
    out, trace = run_stage(TimeWindowStage(), service.retriever, request=_request(), access=access, filter=flt, mask=mask)
    assert out.filter_outcome.to_dict() == {"readable_records": 1, "window_removed": 1, "window": "from 2026-01-01T00:00:00Z to any",
                                            "no_records_reason": None}
    assert trace.outputs == {"readable_without_window": 2, "removed": 1, "readable_records": 1}
    unbounded, trace = run_stage(TimeWindowStage(), service.retriever, request=_request(), access=access, filter=_filter(),
                                 mask=index_mask(service.index, _filter(), []))
    assert unbounded.filter_outcome.window_removed == 0 and unbounded.filter_outcome.readable_records == 2
    assert trace.status == "skipped"


def test_query_embedding_alone(service):
    inline, _ = run_stage(QueryEmbeddingStage(), service.retriever, query="tea",
                          settings=SETTINGS.model_copy(update={"overlap_query_embedding": False}))
    assert inline.query_vector.shape == (service.embedder.dim,) and inline.pending_vector is None
    overlapped, trace = run_stage(QueryEmbeddingStage(), service.retriever, query="coffee", settings=SETTINGS)
    assert overlapped.query_vector is None and isinstance(overlapped.pending_vector, PendingVector)
    assert np.allclose(overlapped.pending_vector.wait("a test"), service.embedder.embed(["coffee"])[0])
    assert trace.outputs["waited_in"] == "a test"


def test_lexical_alone(service, alice):
    tea = write(alice, "The user drinks green tea every morning.", attribute="drink")
    write(alice, "The user plays the oboe.", attribute="music")
    flt = _filter()
    out, trace = run_stage(LexicalStage(), service.retriever, query="green tea", settings=SETTINGS, filter=flt,
                           mask=index_mask(service.index, flt, []))
    assert [c.record_id for c in out.lexical_hits] == [tea] and out.lexical_hits[0].lexical == 1.0
    # each term's doclist, kept for the lifecycle probe (keyed by the term; on PostgreSQL by the filter too)
    assert out.lexical.used_terms == ["green", "tea"] and {k if isinstance(k, str) else k[-1] for k in out.doclists} == {"green", "tea"}


def test_entity_alone(service, alice):
    about = write(alice, "She leads the migration.", about="Priya Raman", about_kind="person", attribute="role")
    out, trace = run_stage(EntityStage(), service.retriever, query="what does Priya Raman lead?",
                           request=_request("what does Priya Raman lead?"), settings=SETTINGS, filter=_filter())
    assert [e["name"] for e in out.entities] == ["Priya Raman"] and [c.record_id for c in out.entity_hits] == [about]
    assert out.entity_hits[0].entity_rank == 1


def test_dense_alone(service, alice):
    tea = write(alice, "The user drinks green tea.", attribute="drink")
    flt = _filter()
    vector = np.asarray(service.embedder.embed(["green tea"])[0], dtype=np.float32)
    out, trace = run_stage(DenseStage(), service.retriever, settings=SETTINGS, filter=flt, mask=index_mask(service.index, flt, []),
                           query_vector=vector, pending_vector=None)
    assert out.dense_hits[0].record_id == tea and out.dense_hits[0].dense_rank == 1 and out.query_vector is vector
    nothing, trace = run_stage(DenseStage(), service.retriever, settings=SETTINGS, filter=flt,
                               mask=index_mask(service.index, _filter(scopes=()), []), query_vector=vector,
                               pending_vector=None)
    assert nothing.dense_hits == [] and trace.notes == ["no indexed record passes the hard filter"]


def test_fusion_alone():
    dense = [_cand(1, dense_rank=1, cosine=0.7), _cand(2, dense_rank=2, cosine=0.5)]
    lexical = [_cand(2, lexical_rank=1, lexical=0.9, lexical_terms=("tea",))]
    out, trace = run_stage(FusionStage(), None, settings=SETTINGS, query="tea", entities=[], query_vector=None,
                           lexical_hits=lexical, entity_hits=[], dense_hits=dense)
    assert [c.record_id for c in out.ranking] == ["mem_2", "mem_1"]  # found by both lists
    assert out.pool[2].cosine == 0.5 and out.pool[2].lexical == 0.9 and out.generated == {"lexical": [2], "entity": [], "dense": [1, 2]}
    assert out.rest_query is None and trace.inputs["fused_lists"] == ["dense", "entity", "lexical"]


def test_freshness_alone():
    old = _cand(1, type="episodic", event_at="2025-03-05T10:00:00Z", fused_rank=1, score=0.2)
    new = _cand(2, type="episodic", event_at="2026-03-04T10:00:00Z", fused_rank=2, score=0.19)
    settings = SETTINGS.model_copy(update={"freshness_weight": 0.5})
    from datetime import datetime, timezone

    out, trace = run_stage(FreshnessStage(), None, settings=settings, query="what am I reading these days?",
                           now=datetime(2026, 3, 5, 10, tzinfo=timezone.utc), ranking=[old, new])
    assert [c.record_id for c in out.ranking] == ["mem_2", "mem_1"] and old.freshness["factor"] < new.freshness["factor"]


def _gate_inputs(ranking, **changes):
    inputs = dict(request=_request(), settings=SETTINGS, query="what does the user drink?", filter=None, mask=None, readable=None,
                  doclists={}, lexical=None, entities=[], query_vector=None, pool={c.seq: c for c in ranking},
                  generated={"dense": [c.seq for c in ranking], "lexical": [], "entity": []}, ranking=ranking, rest_query=None)
    return inputs | changes


def test_gate_alone():
    strong, weak = _cand(1, cosine=0.62, lexical=None), _cand(2, cosine=0.05, lexical=None)
    out, trace = run_stage(GateStage(), None, **_gate_inputs([strong, weak]))
    assert [c.record_id for c in out.ranking] == ["mem_1"] and out.empty_reason is None and out.gate["passed"] is True
    assert trace.dropped == [{"id": "mem_2", "reason": "gate: weak on every signal in a result set that passed "
                                                        "(cosine 0.05, no lexical match; result floor 0.25)"}]
    assert strong.gate == "passed: the result set passes on mem_1 (cosine 0.62 >= floor 0.40); this record: cosine 0.62 >= floor 0.40"
    refused, trace = run_stage(GateStage(), None, **_gate_inputs([_cand(3, cosine=0.2)], request=_request(historical=True)))
    assert refused.ranking == [] and refused.empty_reason.startswith("best cosine 0.20 < floor 0.40")


def test_the_gate_alone_asks_only_the_historical_search_it_was_given():
    # the lifecycle probe is composed, not built in: a hand-built historical search stands in for
    # the generators' re-run, and a gate built without one runs no probe at all
    older = _cand(9, "mem_older", cosine=0.7)
    older.status = "superseded"
    asked = []

    def historical(deps, **given):
        asked.append(given)
        return {older.seq: older}, None

    weak = _cand(3, cosine=0.2)
    refused, trace = run_stage(GateStage(historical=historical), None, **_gate_inputs([weak]))
    assert refused.empty_reason == "all 1 candidates filtered as superseded (1 superseded); historical search includes them"
    assert refused.gate["lifecycle_probe"] == {"superseded": 1, "expired": 0, "passing": 1, "ids": ["mem_older"]}
    assert [(a["query"], a["filter"], a["doclists"]) for a in asked] == [("what does the user drink?", None, {})]
    alone, trace = run_stage(GateStage(), None, **_gate_inputs([_cand(3, cosine=0.2)]))
    assert alone.empty_reason.startswith("best cosine 0.20 < floor 0.40") and "lifecycle_probe" not in alone.gate


def _cosine(embedder, a, b):
    x, y = (np.asarray(v, dtype=np.float32) for v in embedder.embed([a, b]))
    return float(x @ y)


def test_collapse_alone(service, alice):
    texts = ["The user drinks green tea every morning.", "The user drinks green tea after lunch.", "Bob plays the oboe."]
    ids = [write(alice, text, attribute=f"fact_{i}") for i, text in enumerate(texts)]
    close = _cosine(service.embedder, texts[0], texts[1])
    assert _cosine(service.embedder, texts[0], texts[2]) < close - 0.01  # (the test's premise)
    ranking = [_cand(_by_id(service, i)["seq"], i) for i in ids]
    out, trace = run_stage(CollapseStage(), service.retriever, settings=SETTINGS.model_copy(update={"collapse_threshold": close - 0.005}),
                           request=_request(), ranking=ranking)
    assert [c.record_id for c in out.ranking] == [ids[0], ids[2]] and out.ranking[0].content == texts[0]
    assert trace.dropped[0]["id"] == ids[1] and trace.dropped[0]["reason"].startswith(f"near-duplicate of {ids[0]}")
    assert out.ranking[0].duplicates[0]["id"] == ids[1]


class Reverse:
    """A reranker that prefers later passages."""

    def score(self, query, passages):
        return [i / len(passages) for i in range(len(passages))]


@dataclass
class RerankerOnly:
    scorer: Reverse

    def reranker(self, settings):
        return self.scorer


def test_rerank_alone():
    ranking = [_cand(1, content="a"), _cand(2, content="b")]
    out, trace = run_stage(RerankStage(), RerankerOnly(Reverse()), settings=SETTINGS.model_copy(update={"reranker_enabled": True}),
                           request=_request(), query="q", ranking=ranking, floors_deferred=False, gate={})
    assert [c.record_id for c in out.ranking] == ["mem_2", "mem_1"] and out.rerank_outcome["status"] == "reranked"
    off, trace = run_stage(RerankStage(), None, settings=SETTINGS, request=_request(), query="q", ranking=ranking,
                           floors_deferred=False, gate={})
    assert off.ranking == ranking and off.rerank_outcome == {"status": "disabled"} and trace.status == "skipped"


def test_budget_alone(service, alice):
    short = write(alice, "The user drinks tea.", attribute="drink")
    long = write(alice, "The user " + "really " * 400 + "likes long walks.", attribute="walks")
    ranking = [_cand(_by_id(service, i)["seq"], i, content=text) for i, text in
               ((short, "The user drinks tea."), (long, "The user " + "really " * 400 + "likes long walks."))]
    out, trace = run_stage(BudgetStage(), service.retriever, settings=SETTINGS.model_copy(update={"token_budget": 100}),
                           request=_request(), access=service.access("assistant", "alice"), ranking=ranking)
    assert [c.record_id for c in out.results] == [short] and out.results[0].record.id == short
    assert out.budget_used == out.results[0].tokens and trace.dropped[0]["reason"].startswith("token budget:")


def _explained(access, results=(), **changes):
    return run_stage(ExplainStage(), None, request=_request(), settings=SETTINGS, trace=[], rewritten_query=None,
                     rewrite_status="disabled", access=access, results=list(results), **changes)


def test_explain_alone(service):
    service.grant("assistant", "user:alice", read=True, write=False, actor="t")
    access = service.access("assistant", "alice")
    result = _cand(1, dense_rank=1, cosine=0.7, fused_rank=1, fused_score=0.2, gate="passed", budget="fits", tokens=12)
    out, trace = _explained(access, [result], budget_used=12)
    assert out.explanations[0].generators == {"dense": {"rank": 1, "cosine": 0.7}} and out.explanations[0].rank == 1
    assert out.response_explanation.returned == 1 and out.response_explanation.summary.startswith("1 result(s)")
    empty, trace = _explained(access, [result], empty_reason="no readable scopes")
    assert empty.results == [] and empty.response_explanation.summary == "nothing returned: no readable scopes"


def test_log_write_alone(service):
    service.grant("assistant", "user:alice", read=True, write=False, actor="t")
    access = service.access("assistant", "alice")
    explained, _ = _explained(access, empty_reason="nothing here")
    out, trace = run_stage(LogStage(), service.retriever, request=_request(), settings=SETTINGS, search_id="srch_test", at=AT,
                           started=0.0, trace=[], rewritten_query=None, rewrite_status="disabled", access=access,
                           explanations=explained.explanations, response_explanation=explained.response_explanation,
                           empty_reason="nothing here")
    logged = load_search(service.store, "srch_test")
    assert logged.empty_reason == "nothing here" and logged.request.query == "what does the user drink?" and out.log_ms >= 0


def test_every_stage_of_the_pipeline_is_run_alone_here():
    # a stage added to default_stages without a test here fails this one
    alone = set(re.findall(r"run_stage\((\w+)\(", Path(__file__).read_text(encoding="utf-8")))
    missing = [type(s).__name__ for s in default_stages() if type(s).__name__ not in alone]
    assert not missing, f"stages never run alone in this module: {missing}"
