"""The gate floors shipped as defaults are the ones the labelled fixture supports for the packaged
model (real MiniLM). If the embedder or the fixture changes, rerun
``python -m memory_core.eval.fixture_calibrate_cli`` and update the defaults."""

import pytest

from memory_core import load_settings
from memory_core.eval.fixture_calibrate_cli import calibrate
from memory_core.retrieve.calibrate import evaluate, sweep, QuerySignals
from memory_core.service import shared_embedder


def test_sweep_picks_the_best_f1_then_the_higher_floors():
    signals = [
        QuerySignals("a", {"r1"}, [{"id": "r1", "cosine": 0.6, "bm25": None, "entity": False}]),
        QuerySignals("b", {"r2"}, [{"id": "r2", "cosine": 0.3, "bm25": 9.0, "entity": False}]),
        QuerySignals("c", set(), [{"id": "r9", "cosine": 0.35, "bm25": 2.0, "entity": False}]),
    ]
    best = sweep(signals)["chosen"]
    assert best["f1"] == 1.0 and best["cosine_floor"] == 0.6 and best["bm25_floor"] == 9.0
    assert evaluate(signals, 0.3, 100)["answered_off_topic"] == 1


@pytest.mark.model
def test_the_default_floors_are_calibrated_for_the_packaged_model():
    settings = load_settings()
    result = calibrate(settings=settings, embedder=shared_embedder(settings.embedder))
    configured, chosen = result["configured"], result["chosen"]
    assert configured["f1"] >= chosen["f1"] - 0.02, result["chosen"]
    assert configured["answered_off_topic"] <= 2 and configured["empty_answerable"] <= 2
    low, high = result["cosine_band_f1_within_90pct_bm25_off"]
    assert low <= settings.retrieval.cosine_floor <= high


def test_the_vectorised_grid_agrees_with_evaluate():
    from memory_core.retrieve.calibrate import BM25_GRID, COSINE_GRID, _grid

    signals = [
        QuerySignals("a", {"r1"}, [{"id": "r1", "cosine": 0.61, "bm25": 3.0, "entity": False},
                                   {"id": "r3", "cosine": 0.2, "bm25": None, "entity": True}]),
        QuerySignals("b", {"r2"}, [{"id": "r2", "cosine": None, "bm25": 9.5, "entity": False}]),
        QuerySignals("c", set(), [{"id": "r9", "cosine": 0.35, "bm25": 2.0, "entity": False}]),
        QuerySignals("d", set(), []),
    ]
    rows = _grid(signals)
    assert len(rows) == len(COSINE_GRID) * len(BM25_GRID)
    for row in rows[::37]:
        assert row == evaluate(signals, row["cosine_floor"], row["bm25_floor"])
