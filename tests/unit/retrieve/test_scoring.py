import numpy as np
import pytest

from memory_core.retrieve.budget import fit_budget
from memory_core.retrieve.collapse import collapse_near_duplicates
from memory_core.retrieve.freshness import freshness_factor
from memory_core.retrieve.fuse import rrf_fuse, tied_ranks
from memory_core.retrieve.gate.reasons import weak_reason
from memory_core.retrieve.gate.rules import Evidence, GateFloors
from memory_core.text import count_tokens, truncate_to_tokens

from .gate_words import gate_check, gate_set


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


FLOORS = GateFloors(cosine=0.4, lexical=0.75, entity_support_cosine=0.3, entity_support_lexical=0.5)


def test_gate_check_passes_on_any_strong_signal_and_explains_a_failure():
    assert gate_check(Evidence(0.5, None), FLOORS) == (True, "cosine 0.50 >= floor 0.40")
    assert gate_check(Evidence(0.1, 0.8), FLOORS) == (True, "lexical score 0.80 >= floor 0.75")
    passed, reason = gate_check(Evidence(0.31, 0.21), FLOORS)
    assert not passed and reason == "cosine 0.31 < floor 0.40; lexical score 0.21 < floor 0.75; no entity match"


def test_an_entity_match_needs_support_for_the_rest_of_the_question():
    assert gate_check(Evidence(0.35, 0.2, ("Priya",), 0.0), FLOORS) == (True, "entity match (Priya) supported by cosine 0.35 >= 0.30")
    assert gate_check(Evidence(0.1, 0.6, ("Priya",), 0.5), FLOORS) == (
        True, "entity match (Priya) supported by the rest of the question: lexical 0.50 >= 0.50")
    passed, reason = gate_check(Evidence(0.12, 0.3, ("Alice",), 0.0), FLOORS)
    assert not passed and reason == ("cosine 0.12 < floor 0.40; lexical score 0.30 < floor 0.75; entity match (Alice) without "
                                     "support for the rest of the question (cosine 0.12 < 0.30; rest of the question lexical 0.00 < 0.50)")
    passed, reason = gate_check(Evidence(0.2, 1.0, ("Alice",), None), FLOORS)
    assert passed  # "Alice" alone: the lexical score (every query word held) is strong on its own


def test_the_gate_judges_the_set_on_its_best_candidate():
    weak, strong = Evidence(0.2, 0.1), Evidence(0.41, None)
    assert gate_set([weak, strong, weak], FLOORS) == (1, "cosine 0.41 >= floor 0.40")
    first, reason = gate_set([weak, Evidence(0.33, 0.5), Evidence(0.1, None, ("Alice",), 0.2)], FLOORS)
    assert first is None
    assert reason == ("best cosine 0.33 < floor 0.40; best lexical score 0.50 < floor 0.75; entity match (Alice) without "
                      "support for the rest of the question (cosine 0.10 < 0.30; rest of the question lexical 0.20 < 0.50)")
    assert gate_set([], FLOORS) == (None, "no candidates")


def test_weak_reason_matches_the_documented_wording_and_never_shows_equal_numbers():
    assert weak_reason(Evidence(0.31, 0.21), FLOORS) == "best cosine 0.31 < floor 0.40; best lexical score 0.21 < floor 0.75; no entity match"
    assert weak_reason(Evidence(None, None), FLOORS) == "no dense candidate; no lexical match; no entity match"
    assert weak_reason(Evidence(0.3996, 0.7499), FLOORS) == (
        "best cosine 0.3996 < floor 0.4000; best lexical score 0.7499 < floor 0.7500; no entity match")


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


def test_tied_ranks_share_the_mean_of_the_positions_they_span():
    assert tied_ranks([]) == []
    assert tied_ranks([2, 2, 2, 1]) == [2.0, 2.0, 2.0, 4.0]
    assert tied_ranks(["a", "b", "b", "c"]) == [1.0, 2.5, 2.5, 4.0]
    assert tied_ranks([1, 1, 2, 1]) == [1.5, 1.5, 3.0, 4.0]  # only adjacent equal groups tie


def test_rrf_takes_explicit_ranks_so_tied_items_score_alike():
    lists = {"dense": ["b", "a"], "entity": ["a", "b", "c"]}
    tied = dict(rrf_fuse(lists, 5, {"entity": [2.0, 2.0, 2.0]}))
    assert tied["a"] == pytest.approx(1 / 7 + 1 / 7) and tied["b"] == pytest.approx(1 / 6 + 1 / 7)
    assert [i for i, _ in rrf_fuse(lists, 5, {"entity": [2.0, 2.0, 2.0]})] == ["b", "a", "c"]
    assert [i for i, _ in rrf_fuse(lists, 5)] == ["a", "b", "c"]  # by position, the entity list's first wins
    with pytest.raises(ValueError, match="3 items but 2 ranks"):
        rrf_fuse(lists, 5, {"entity": [1.0, 2.0]})
