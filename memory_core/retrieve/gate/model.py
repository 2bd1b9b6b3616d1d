"""The known-name gate: a small logistic model over the signals a question naming a known entity leaves.

A question that names someone the memory knows well ("What did Jon research?" asked of Jon's
memory) matches every record about that person, so neither its cosine nor a word overlap says
whether the memory holds an answer. Five numbers the pipeline already has do say something:

- ``rest_cosine``: the best cosine between the question with the names taken out and a candidate;
- ``rest_lexical``: the best lexical score on the question's words other than the names;
- ``rest_both``: the best ``rest_cosine + 0.5 × lexical score`` of any one candidate (a record close
  to the rest of the question *and* holding its words is better evidence than two records each
  strong on one);
- ``cosine`` and ``lexical``: the best full-query cosine and lexical score of the set;
- ``names_held``: 0 when the query also spells a name no readable record holds ("Which Disney movie
  did Sam mention?" asked of a memory that knows Sam but never saw the word "Disney"), else 1
  (names.unheld_names: capitalised words other than the first, stop words, months and weekdays);
- ``rest_cover``, ``rest_cover_joint`` and ``rest_held``: how well the words of the rest of the
  question, matched by stem, are covered by one candidate, that coverage joined with the candidate's
  name-stripped cosine, and how much of them some readable record holds at all (:mod:`.rest_cover`).

The model is ``p = 1 / (1 + exp(-(bias + Σ weight × value)))``, a missing value counting as 0; the
result set passes when ``p`` reaches ``name_model_floor``. The weights are retrieval settings
(``name_model_weights``, bias first) fitted by the calibrator on one half of LoCoMo and reported on
the other (docs/calibration.md); a logistic model keeps the decision monotone in every signal and
readable in a reason string.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

FEATURES = ("rest_cosine", "rest_lexical", "rest_both", "cosine", "lexical", "names_held", "rest_cover", "rest_cover_joint",
            "rest_held")
FIRST_FEATURES = 6  # a weights setting from before the word-level signals has a bias and these six (the rest count 0)
REST_BOTH_LEXICAL_WEIGHT = 0.5  # how much a candidate's lexical score adds to its name-stripped cosine in rest_both


def rest_both(rest_cosine: float | None, lexical: float | None) -> float | None:
    """One candidate's joint support for the rest of the question (None when it has no rest cosine)."""
    if rest_cosine is None:
        return None
    return rest_cosine + REST_BOTH_LEXICAL_WEIGHT * (lexical or 0.0)


def probability(weights: Sequence[float], values: Sequence[float | None]) -> float:
    """The model's probability that the memory holds an answer: ``weights`` is bias then one weight
    per feature (in :data:`FEATURES` order); a missing value counts as 0. Weights for only the first
    six features (an older setting) leave the later ones out."""
    if len(weights) not in (FIRST_FEATURES + 1, len(FEATURES) + 1) or len(values) not in (FIRST_FEATURES, len(FEATURES)):
        raise ValueError(f"the known-name model takes {len(FEATURES)} features (or the first {FIRST_FEATURES}) and a bias")
    z = weights[0] + sum(w * (v or 0.0) for w, v in zip(weights[1:], values))
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def describe(values: Sequence[float | None]) -> str:
    """The features as a reason reads them: 'cosine without the name 0.41, …, every name held 1'."""
    labels = ("cosine without the name", "lexical on the other words", "joint", "best cosine", "best lexical",
              "every name held", "other words covered by stem", "joint with coverage", "other words held in memory")
    return ", ".join(f"{label} {'none' if v is None else f'{v:g}' if label == 'every name held' else f'{v:.2f}'}"
                     for label, v in zip(labels, values))
