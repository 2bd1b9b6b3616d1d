"""Retrieval and detection metrics as pure functions (no store, no model).

Rankings are lists of record ids; a ``covers`` mapping says which evidence ids (LoCoMo turn ids)
each record stands for. A record normally stands for one turn; when the write path merged a
near-duplicate turn into an earlier record, that record stands for both.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


def covered(ranking: Sequence[str], covers: Mapping[str, Iterable[str]], k: int) -> set[str]:
    """Evidence ids covered by the first ``k`` records of ``ranking``."""
    out: set[str] = set()
    for record_id in ranking[:k]:
        out.update(covers.get(record_id, ()))
    return out


def recall_at_k(ranking: Sequence[str], evidence: Iterable[str], covers: Mapping[str, Iterable[str]], k: int) -> float:
    """Share of the evidence ids found in the top ``k`` (0 for an empty evidence set)."""
    wanted = set(evidence)
    if not wanted:
        return 0.0
    return len(wanted & covered(ranking, covers, k)) / len(wanted)


def hit_at_k(ranking: Sequence[str], evidence: Iterable[str], covers: Mapping[str, Iterable[str]], k: int) -> float:
    """1.0 if any evidence id is in the top ``k``, else 0.0."""
    return 1.0 if set(evidence) & covered(ranking, covers, k) else 0.0


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else float("nan")


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """Area under the ROC curve: the chance a random positive scores above a random negative
    (ties count half). Rank-based, O(n log n)."""
    if not positives or not negatives:
        return float("nan")
    scored = sorted([(v, 1) for v in positives] + [(v, 0) for v in negatives])
    rank_sum = 0.0
    i = 0
    while i < len(scored):
        j = i
        while j + 1 < len(scored) and scored[j + 1][0] == scored[i][0]:
            j += 1
        average_rank = (i + j) / 2.0 + 1.0
        rank_sum += average_rank * sum(1 for t in range(i, j + 1) if scored[t][1] == 1)
        i = j + 1
    n_pos, n_neg = len(positives), len(negatives)
    return (rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


@dataclass(frozen=True)
class Confusion:
    """Gate outcomes on a labelled set; "positive" means the gate let results through."""

    tp: int  # answerable, results returned
    fp: int  # off-topic, results returned
    tn: int  # off-topic, empty (correct empty)
    fn: int  # answerable, empty (false empty)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def correct_empty(self) -> float:
        """Share of off-topic queries answered with nothing."""
        return self.tn / (self.tn + self.fp) if self.tn + self.fp else float("nan")

    @property
    def false_empty(self) -> float:
        """Share of answerable queries wrongly answered with nothing."""
        return self.fn / (self.fn + self.tp) if self.fn + self.tp else float("nan")

    def to_dict(self) -> dict:
        return {"tp": self.tp, "fp": self.fp, "tn": self.tn, "fn": self.fn, "precision": self.precision,
                "recall": self.recall, "f1": self.f1, "correct_empty": self.correct_empty, "false_empty": self.false_empty}


def confusion(passed: Sequence[bool], labels: Sequence[bool]) -> Confusion:
    """Tally gate decisions (``passed``) against labels (True = answerable)."""
    tp = sum(1 for p, y in zip(passed, labels) if p and y)
    fp = sum(1 for p, y in zip(passed, labels) if p and not y)
    tn = sum(1 for p, y in zip(passed, labels) if not p and not y)
    fn = sum(1 for p, y in zip(passed, labels) if not p and y)
    return Confusion(tp, fp, tn, fn)


def band(values: Sequence[float], scores: Sequence[float], share: float = 0.9) -> tuple[float, float] | None:
    """The range of ``values`` whose score is at least ``share`` of the best score.

    ``values`` must be sorted ascending. Returns the lowest and highest qualifying value (the band
    is reported as one interval even if a dip inside it falls below the line; the sweep's table
    shows every point).
    """
    if not scores:
        return None
    best = max(scores)
    if best <= 0 or math.isnan(best):
        return None
    inside = [v for v, s in zip(values, scores) if s >= share * best]
    return (min(inside), max(inside)) if inside else None


def frange(start: float, stop: float, step: float) -> list[float]:
    """Inclusive float range rounded to the step's precision."""
    digits = max(0, -int(math.floor(math.log10(step)))) + 1
    count = int(round((stop - start) / step))
    return [round(start + i * step, digits) for i in range(count + 1)]
