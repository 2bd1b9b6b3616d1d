"""Fitting the known-name model (:mod:`memory_core.retrieve.gate.model`) on one half of LoCoMo.

The samples are the labelled queries that name a known entity with a full entity list (LoCoMo's
answerable questions, which name a speaker, and its named off-topic questions); the features are
what the open pass's gate stage logged for them. The fit is a plain L2-regularised logistic
regression (Newton steps on standardised features, numpy only), turned back into weights on the
raw features so the pipeline needs no scaler. Its floor is then chosen by the calibrator like
every other gate constant (:func:`.gate_calibration.sweep_model_floor`; docs/calibration.md, step 5c).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..retrieve.gate import model as gate_model

# A labelled query is a gate_calibration.GateFeatures; not imported, because the calibrator
# imports this module (no cycle, not even for type checking).
GateFeatures = Any

L2 = 1.0  # on standardised features: enough to keep the correlated weights stable between halves


def model_values(f: GateFeatures) -> tuple[float | None, ...]:
    """A logged query's features, in ``gate_model.FEATURES`` order."""
    return (f.rest_cosine, f.rest_lexical, f.rest_both, f.cosine, f.lexical, 0.0 if f.unheld_name else 1.0,
            f.rest_cover, f.rest_cover_joint, f.rest_held)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 50) -> list[float]:
    """Bias and weights (on the raw features) of an L2-regularised logistic regression."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale = np.where(scale > 1e-9, scale, 1.0)
    design = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    w = np.zeros(design.shape[1])
    penalty = np.diag([0.0, *([l2] * x.shape[1])])  # the bias is not shrunk
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-design @ w))
        grad = design.T @ (p - y) + penalty @ w
        hess = design.T @ (design * (p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    raw = w[1:] / scale
    return [round(float(w[0] - (raw * mean).sum()), 6), *(round(float(v), 6) for v in raw)]


def samples(features: list[GateFeatures]) -> list[GateFeatures]:
    """The queries the model judges: those naming a known entity (with a full entity list)."""
    return [f for f in features if f.known_name]


def fit(features: list[GateFeatures]) -> list[float]:
    """The model's weights fitted on ``features`` (answerable = 1), every weight at least 0.

    More support for the question must never make the gate more likely to refuse, so a feature
    whose fitted weight comes out negative (the five are correlated: the joint value is the rest
    cosine plus half a lexical score) is dropped and the rest refitted, until none is negative.
    """
    chosen = samples(features)
    size = len(gate_model.FEATURES)
    if not chosen or len({f.answerable for f in chosen}) < 2:
        return [0.0] * (size + 1)
    x = np.array([[v or 0.0 for v in model_values(f)] for f in chosen], dtype=np.float64)
    y = np.array([float(f.answerable) for f in chosen])
    active = list(range(size))
    while active:
        fitted = fit_logistic(x[:, active], y)
        raw = fitted[1:]
        if min(raw) >= 0:
            weights = [fitted[0]] + [0.0] * size
            for column, value in zip(active, raw):
                weights[column + 1] = value
            return weights
        del active[int(np.argmin(raw))]
    return [fit_logistic(np.zeros((len(y), 1)), y)[0]] + [0.0] * size


def probability(f: GateFeatures, weights: list[float]) -> float:
    """The model's probability for one logged query."""
    return gate_model.probability(weights, model_values(f))
