import math

from memory_core.eval.metrics import auc, band, confusion, hit_at_k, recall_at_k


def test_recall_counts_evidence_found_in_the_top_k():
    covers = {"r1": ["D1:1"], "r2": ["D1:2"], "r3": ["D1:3"]}
    ranking = ["r3", "r1", "r2"]
    assert recall_at_k(ranking, ["D1:1", "D1:2"], covers, 2) == 0.5
    assert recall_at_k(ranking, ["D1:1", "D1:2"], covers, 3) == 1.0
    assert recall_at_k([], ["D1:1"], covers, 10) == 0.0


def test_a_merged_record_is_credited_with_every_turn_it_stands_for():
    covers = {"r1": ["D1:1", "D4:2"]}
    assert recall_at_k(["r1"], ["D4:2"], covers, 1) == 1.0


def test_hit_needs_only_one_evidence_turn():
    covers = {"r1": ["D1:1"], "r2": ["D1:2"]}
    assert hit_at_k(["r2", "r1"], ["D1:1", "D9:9"], covers, 2) == 1.0
    assert hit_at_k(["r2"], ["D1:1"], covers, 1) == 0.0


def test_auc_is_one_for_perfect_separation_and_half_for_ties():
    assert auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auc([0.1], [0.9]) == 0.0
    assert auc([0.5, 0.5], [0.5, 0.5]) == 0.5
    assert math.isnan(auc([], [0.1]))


def test_confusion_rates():
    c = confusion(passed=[True, True, False, False, True], labels=[True, True, True, False, False])
    assert (c.tp, c.fp, c.tn, c.fn) == (2, 1, 1, 1)
    assert c.false_empty == 1 / 3
    assert c.correct_empty == 0.5
    assert round(c.f1, 4) == round(2 * (2 / 3) * (2 / 3) / (4 / 3), 4)


def test_band_spans_values_within_the_share_of_the_best():
    values = [0.1, 0.2, 0.3, 0.4, 0.5]
    scores = [0.5, 0.85, 1.0, 0.91, 0.2]
    assert band(values, scores, 0.9) == (0.3, 0.4)
    assert band(values, [0, 0, 0, 0, 0]) is None
