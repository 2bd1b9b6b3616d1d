import math

from memory_core.eval.calibration import GateFeatures, calibrate, evaluate_floors, frange, passes, recommend, sweep


def _features():
    # answerable queries score high on cosine, off-topic ones low; one answerable is lexical-only
    answerable = [GateFeatures(f"a{i}", True, 0.55 + i * 0.02, 1.0, False) for i in range(10)]
    answerable.append(GateFeatures("a-lex", True, 0.20, 12.0, False))
    off_topic = [GateFeatures(f"o{i}", False, 0.15 + i * 0.02, 1.0, False) for i in range(10)]
    return answerable + off_topic


def test_passes_on_any_signal():
    f = GateFeatures("q", True, 0.3, 7.0, False)
    assert passes(f, 0.4, 6.0)
    assert not passes(f, 0.4, 8.0)
    assert passes(GateFeatures("q", True, None, None, True), 0.9, 30.0)
    assert not passes(GateFeatures("q", True, None, None, True), 0.9, 30.0, use_entity=False)


def test_sweep_matches_direct_evaluation():
    features = _features()
    points = sweep(features, [0.3, 0.5], [5.0, math.inf])
    for p in points:
        direct = evaluate_floors(features, p["cosine_floor"], p["bm25_floor"])
        assert (p["tp"], p["fp"], p["tn"], p["fn"]) == (direct["tp"], direct["fp"], direct["tn"], direct["fn"])


def test_calibration_finds_a_separating_pair_and_a_band():
    report = calibrate(_features(), cosine_floors=frange(0.0, 0.9, 0.05), bm25_floors=frange(0.0, 15.0, 1.0))
    pick = report["recommended"]
    assert pick["f1"] == 1.0 and pick["false_empty"] == 0.0 and pick["correct_empty"] == 1.0
    assert 0.35 <= pick["cosine_floor"] <= 0.55
    assert 1.0 < pick["bm25_floor"] <= 12.0
    low, high = report["cosine"]["band"]
    assert low <= report["cosine"]["best_value"] <= high
    assert report["separation"]["cosine_auc"] > 0.9


def test_recommend_respects_the_false_empty_target():
    points = [
        {"cosine_floor": 0.5, "bm25_floor": 5.0, "f1": 0.9, "false_empty": 0.10, "correct_empty": 0.99},
        {"cosine_floor": 0.4, "bm25_floor": 5.0, "f1": 0.85, "false_empty": 0.04, "correct_empty": 0.90},
    ]
    assert recommend(points, 0.05)["cosine_floor"] == 0.4
    assert recommend(points, 0.2)["cosine_floor"] == 0.5


def test_frange_is_inclusive_and_rounded():
    assert frange(0.0, 0.3, 0.1) == [0.0, 0.1, 0.2, 0.3]


def test_the_pick_does_not_lean_on_entity_matches():
    # every answerable query has an entity match, so with entities any floors look perfect
    features = [GateFeatures(f"a{i}", True, 0.5 + i * 0.01, 1.0, True) for i in range(10)]
    features += [GateFeatures(f"o{i}", False, 0.2 + i * 0.01, 1.0, False) for i in range(10)]
    report = calibrate(features, cosine_floors=frange(0.0, 0.9, 0.05), bm25_floors=[5.0])
    assert 0.3 <= report["recommended"]["cosine_floor"] <= 0.5
    assert report["recommended_outcome_with_entity"]["false_empty"] == 0.0


def test_guards_pull_the_pick_down_to_keep_short_personal_queries():
    features = _features() + [GateFeatures("o-hard", False, 0.48, 1.0, False)]  # a hard off-topic query
    guards = [GateFeatures("g-pet", True, 0.41, 0.5, False), GateFeatures("g-haiku", False, 0.12, None, False)]
    report = calibrate(features, guards=guards, cosine_floors=frange(0.0, 0.9, 0.01), bm25_floors=frange(0.0, 15.0, 1.0))
    assert report["recommended"]["cosine_floor"] <= 0.41
    assert report["recommended_guards"]["lost"] == [] and report["recommended_guards"]["leaked"] == []
    assert report["recommended_unguarded"]["cosine_floor"] > 0.41
    assert report["unguarded_guards"]["lost"] == ["g-pet"]
