import numpy as np
import pytest

from memory_core.retrieve.scoring import (
    collapse_near_duplicates,
    count_tokens,
    fit_budget,
    freshness_factor,
    gate_check,
    rrf_fuse,
    truncate_to_tokens,
    weak_signals_reason,
)


def test_rrf_rewards_agreement_and_rank():
    fused = dict(rrf_fuse({"dense": ["a", "b", "c"], "lexical": ["b", "d"], "entity": []}, k=60))
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["a"] == pytest.approx(1 / 61)
    order = [item for item, _ in rrf_fuse({"dense": ["a", "b", "c"], "lexical": ["b", "d"]}, k=60)]
    assert order == ["b", "a", "d", "c"]


def test_rrf_with_one_empty_generator_keeps_the_other_order():
    assert [i for i, _ in rrf_fuse({"dense": [], "lexical": ["x", "y", "z"]}, 60)] == ["x", "y", "z"]


def test_rrf_rejects_a_non_positive_constant():
    with pytest.raises(ValueError):
        rrf_fuse({"dense": ["a"]}, 0)


def test_freshness_halves_the_recency_part_each_half_life():
    assert freshness_factor(0, 90, 0.5) == 1.0
    assert freshness_factor(90, 90, 0.5) == pytest.approx(0.75)
    assert freshness_factor(180, 90, 0.5) == pytest.approx(0.625)
    assert freshness_factor(-5, 90, 0.5) == 1.0  # a future event is not penalised
    assert freshness_factor(1000, 90, 0.0) == 1.0


def test_gate_check_passes_on_any_signal_and_explains_a_failure():
    assert gate_check(0.5, None, [], 0.4, 6.0) == (True, "passed: cosine 0.50 >= floor 0.40")
    assert gate_check(0.1, 7.25, [], 0.4, 6.0) == (True, "passed: BM25 7.2 >= floor 6.0")
    assert gate_check(0.1, 1.0, ["Priya"], 0.4, 6.0) == (True, "passed: exact entity match (Priya)")
    passed, reason = gate_check(0.31, 2.1, [], 0.4, 6.0)
    assert not passed and reason == "cosine 0.31 < floor 0.40; BM25 2.1 < floor 6.0; no entity match"


def test_weak_reason_matches_the_documented_wording_and_never_shows_equal_numbers():
    assert weak_signals_reason(0.31, 2.1, 0.40, 6.0) == "best cosine 0.31 < floor 0.40; best BM25 2.1 < floor 6.0; no entity match"
    assert weak_signals_reason(None, None, 0.4, 6.0) == "no dense candidate; no lexical match; no entity match"
    assert weak_signals_reason(0.3996, 5.99, 0.4, 6.0) == "best cosine 0.3996 < floor 0.4000; best BM25 5.99 < floor 6.00; no entity match"


def test_collapse_keeps_the_better_ranked_copy():
    v = np.array([[1, 0, 0], [0.999, 0.0447, 0], [0, 1, 0], [0, 0, 0]], dtype=np.float32)
    v[1] /= np.linalg.norm(v[1])
    kept, absorbed = collapse_near_duplicates(["a", "b", "c", "d"], v, 0.95)
    assert kept == ["a", "c", "d"]
    assert absorbed["b"][0] == "a" and absorbed["b"][1] > 0.95


def test_count_tokens_is_a_documented_conservative_estimate():
    assert count_tokens("") == 0
    assert count_tokens("The user prefers concise answers.") == 1 + 1 + 2 + 2 + 2 + 1
    assert count_tokens("PR-1234") == 3  # "PR", "-", "1234"


def test_truncate_stays_within_the_token_count():
    text = "word " * 500
    cut = truncate_to_tokens(text, 50)
    assert cut.endswith("…") and count_tokens(cut) <= 50
    assert truncate_to_tokens("short text", 50) == "short text"


def test_fit_budget_skips_what_does_not_fit_and_respects_the_limit():
    assert fit_budget([10, 50, 5, 5], budget=30, limit=10) == [("keep", 10), ("over_budget", 10), ("keep", 15), ("keep", 20)]
    assert fit_budget([10, 10, 10], budget=100, limit=2) == [("keep", 10), ("keep", 20), ("over_limit", 20)]
    assert fit_budget([500, 10], budget=100, limit=5) == [("truncate", 100), ("over_budget", 100)]
