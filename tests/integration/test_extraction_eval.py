"""Session extraction over the labelled transcripts in seed_data/extraction_eval/, with the real
packaged embedder: nothing the transcripts do not support is written, and every session gets
exactly one summary (benchmarks/extraction_eval.py reports the full numbers)."""

import tomllib
from pathlib import Path

import pytest

from benchmarks.extraction_eval import EVAL_DIR, build_embedder, evaluate_file
from memory_core import load_settings

pytestmark = pytest.mark.model
FILES = sorted(EVAL_DIR.glob("*.toml"))


@pytest.fixture(scope="module")
def embedder():
    return build_embedder("packaged", load_settings())


def test_the_labelled_set_is_varied_and_well_formed():
    assert len(FILES) >= 10
    for path in FILES:
        spec = tomllib.loads(path.read_text())
        assert spec["sessions"] and all(s["turns"] and s["start"] for s in spec["sessions"])
        for fact in spec.get("expected", []):
            assert fact["id"] and fact["must_include"]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_extraction_writes_no_pollution(path: Path, embedder):
    result = evaluate_file(path, load_settings(), embedder)
    assert result["pollution"] == 0, result["pollution_detail"]
    assert result["summaries_ok"]
    assert result["runs_succeeded"] == result["sessions"]
