"""The one gate calibrator: it decides with the pipeline's own gate (no copy), its sweep equals direct
evaluation, and its pick follows the documented order (guards, false-empty, correct-empty, lowest floors)."""

import math

import pytest

from memory_core.eval.gate_calibration import (FLOOR_NAMES, GateFeatures, calibrate, features_from_gate, guard_errors, outcome,
                                               passes, recommend, sweep)
from memory_core.retrieve.gate import model as gate_model

FLOORS = dict(zip(FLOOR_NAMES, (0.4, 0.6, 0.5, 0.35, 0.5)))
GRID = {"cosine_floor": [0.3, 0.4, 0.5], "cosine_floor_unknown_name": [0.5, 0.7, math.inf], "lexical_floor": [0.5, 0.9, math.inf],
        "entity_support_cosine": [0.3, math.inf], "entity_support_lexical": [0.4, math.inf]}


def _features():
    answerable = [GateFeatures(f"conv-a#{i}", True, 0.45 + i * 0.02, 0.3, 0.45 + i * 0.02, 0.2) for i in range(8)]
    answerable.append(GateFeatures("conv-b#1", True, 0.32, 0.95))  # found by its words only
    answerable.append(GateFeatures("conv-b#2", True, 0.33, 0.1, 0.33, 0.6))  # a name plus the rest of the question
    off = [GateFeatures(f"conv-a<-x#{i}", False, 0.2 + i * 0.04, 0.2, unknown_name=True) for i in range(8)]
    named = [GateFeatures(f"conv-b<-y#{i}~named", False, 0.35, 0.1, 0.35, 0.0) for i in range(4)]
    return answerable + off + named


def test_a_short_list_name_is_judged_by_the_pipelines_short_list_rule():
    """The calibrator used to carry its own copy of the gate, without the short-list rule: a query
    naming a rarely mentioned person passed it on the floors alone, though the pipeline emptied it."""
    logged = {"best_cosine": 0.62, "best_lexical": 0.1, "known_names": ["Mia"], "known_names_short": True,
              "best_rest_cosine": 0.12, "best_rest_lexical": None, "best_rest_cover_joint": 0.15}
    f = features_from_gate("fixture#1", False, logged, "fixture")
    shipped = FLOORS | {"name_model_floor": 0.1, "name_model_weights": [0.0] * 10}
    assert not passes(f, shipped)  # the rest of the question finds nothing: empty, as the pipeline answers
    supported = features_from_gate("fixture#2", True, logged | {"best_rest_cosine": 0.45}, "fixture")
    assert passes(supported, shipped)
    assert not f.known_name  # (the known-name model is still fitted on full-list names only)


def test_the_unknown_name_floor_replaces_the_cosine_floor():
    f = GateFeatures("q", False, 0.55, None, unknown_name=True)
    assert not passes(f, FLOORS) and passes(GateFeatures("q", True, 0.55, None), FLOORS)
    assert passes(f, FLOORS | {"cosine_floor_unknown_name": 0.5})


def test_the_sweep_equals_direct_evaluation():
    features, guards = _features(), [GateFeatures("g1", True, 0.31, 0.45), GateFeatures("g2", False, 0.42, None)]
    points = sweep(features, guards, GRID)
    assert len(points) == math.prod(len(v) for v in GRID.values())
    for p in points[::7]:
        floors = {n: p[n] for n in FLOOR_NAMES}
        direct = outcome(features, floors)
        for key in ("false_empty", "correct_empty_off_topic", "correct_empty_named", "correct_empty"):
            assert p[key] == pytest.approx(direct[key])
        errors = guard_errors(guards, floors)
        assert p["guard_errors"] == len(errors["lost"]) + len(errors["leaked"])


def test_the_pick_keeps_guards_first_then_the_false_empty_bound_then_correct_empty():
    points = [
        {**FLOORS, "guard_errors": 1, "false_empty": 0.0, "correct_empty": 1.0},
        {**FLOORS, "cosine_floor": 0.5, "guard_errors": 0, "false_empty": 0.2, "correct_empty": 0.99},
        {**FLOORS, "cosine_floor": 0.45, "guard_errors": 0, "false_empty": 0.01, "correct_empty": 0.9},
        {**FLOORS, "cosine_floor": 0.42, "guard_errors": 0, "false_empty": 0.01, "correct_empty": 0.9},
    ]
    pick = recommend(points, max_false_empty=0.02)
    assert pick["cosine_floor"] == 0.42 and pick["met_false_empty_target"]


def test_calibrate_picks_on_one_half_and_reports_on_the_other():
    report = calibrate(_features(), [{"conv-a"}, {"conv-b"}], grid=GRID, max_false_empty=0.0)
    assert [f["train"] for f in report["folds"]] == [["conv-a"], ["conv-b"]]
    first = report["folds"][0]
    assert report["recommended"] == first["floors"]
    assert first["held_out"]["questions"] == {"answerable": 2, "named": 4, "named_verified": 4}
    assert first["train_outcome"]["false_empty"] == 0.0


def test_named_questions_whose_label_is_doubted_are_left_out_of_the_verified_rate():
    from dataclasses import replace

    named = [GateFeatures(f"conv-b<-y#{i}~named", False, 0.35, 0.1) for i in range(4)]
    named[0] = replace(named[0], cosine=0.9)  # let through by the gate ...
    named[1] = replace(named[1], cosine=0.9, doubted=True)  # ... and let through, but possibly answerable after all
    result = outcome(named, FLOORS)
    assert result["correct_empty_named"] == 0.5
    assert result["correct_empty_named_verified"] == pytest.approx(2 / 3) and result["questions"]["named_verified"] == 3


def test_the_known_name_rule_is_swept_on_top_of_the_floors():
    from memory_core.eval.gate_calibration import recommend_rest, sweep_rest

    answerable = [GateFeatures(f"conv-a#{i}", True, 0.6, 0.2, 0.6, 0.1, known_name=True, rest_cosine=0.35 + i * 0.01, rest_lexical=0.2)
                  for i in range(10)]
    named = [GateFeatures(f"conv-a<-y#{i}~named", False, 0.6, 0.2, 0.6, 0.0, known_name=True, rest_cosine=0.15 + i * 0.01,
                          rest_lexical=0.1) for i in range(10)]
    rule = {**FLOORS, "name_rest_cosine": 0.3, "name_rest_lexical": 1.0}
    assert all(passes(f, rule) for f in answerable) and not any(passes(f, rule) for f in named)
    assert passes(named[0], FLOORS)  # without the rule the name carries every named question through
    pick = recommend_rest(sweep_rest(answerable + named, [], FLOORS), max_false_empty=0.0)
    assert pick["false_empty"] == 0.0 and pick["correct_empty_named"] == 1.0
    assert 0.25 <= pick["name_rest_cosine"] <= 0.35


def _named_samples():
    answerable = [GateFeatures(f"conv-a#{i}", True, 0.55 + (i % 5) * 0.02, 0.3 + (i % 3) * 0.1, 0.55, 0.1, known_name=True,
                               rest_cosine=0.38 + (i % 7) * 0.02, rest_lexical=0.2 + (i % 4) * 0.1, rest_both=0.5 + (i % 5) * 0.03)
                  for i in range(40)]
    named = [GateFeatures(f"conv-a<-y#{i}~named", False, 0.5 + (i % 5) * 0.02, 0.1 + (i % 3) * 0.05, 0.5, 0.0, known_name=True,
                          rest_cosine=0.2 + (i % 7) * 0.02, rest_lexical=0.05 * (i % 3), rest_both=0.25 + (i % 5) * 0.03)
             for i in range(40)]
    return answerable, named


def test_the_fitted_model_separates_and_its_floor_respects_the_false_empty_bound():
    from memory_core.eval import name_model_fit
    from memory_core.eval.gate_calibration import recommend_model_floor, sweep_model_floor

    answerable, named = _named_samples()
    weights = name_model_fit.fit(answerable + named)
    assert len(weights) == len(gate_model.FEATURES) + 1 and weights[1] > 0  # more support for the rest of the question, more likely answerable
    probs_pos = [name_model_fit.probability(f, weights) for f in answerable]
    probs_neg = [name_model_fit.probability(f, weights) for f in named]
    assert min(probs_pos) > max(probs_neg)  # separable data is separated
    pick = recommend_model_floor(sweep_model_floor(answerable + named, [], FLOORS, weights), max_false_empty=0.0)
    assert pick["false_empty"] == 0.0 and pick["correct_empty_named"] == 1.0
    off = sweep_model_floor(answerable + named, [], FLOORS, weights)[0]
    assert off["name_model_floor"] == -1.0 and off["correct_empty_named"] == 0.0  # the model off lets every named one through


def test_a_fit_without_both_labels_is_the_neutral_model():
    from memory_core.eval import name_model_fit

    answerable, _ = _named_samples()
    assert name_model_fit.fit(answerable) == [0.0] * (len(gate_model.FEATURES) + 1)
    assert name_model_fit.fit([]) == [0.0] * (len(gate_model.FEATURES) + 1)


def test_calibrate_reports_the_model_and_the_two_floor_rule_per_fold():
    answerable, named = _named_samples()
    other = [GateFeatures(f.qid.replace("conv-a", "conv-b"), f.answerable, f.cosine, f.lexical, f.entity_cosine, f.entity_rest,
                          known_name=True, rest_cosine=f.rest_cosine, rest_lexical=f.rest_lexical, rest_both=f.rest_both)
             for f in answerable + named]
    report = calibrate(answerable + named + other, [{"conv-a"}, {"conv-b"}], grid=GRID, max_false_empty=0.0)
    for fold in report["folds"]:
        assert fold["floors"]["name_model_floor"] > -1.0 and len(fold["floors"]["name_model_weights"]) == len(gate_model.FEATURES) + 1
        assert fold["held_out"]["correct_empty_named"] == 1.0 and fold["held_out"]["false_empty"] == 0.0
        assert "rule" in fold["train_outcome"] and "held_out" in fold["train_outcome"]["rule"]
