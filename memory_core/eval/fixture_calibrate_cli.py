"""Run the gate-floor calibration on the labelled fixture (see :mod:`memory_core.retrieve.calibrate`).

    python -m memory_core.eval.fixture_calibrate_cli [--fixture tests/data/gate_calibration.json] [--out calib.json]

The sweep itself lives with the retriever; this module builds the temporary store through the
service, which the retrieve layer may not import.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from ..clock import FixedClock
from ..retrieve.calibrate import DEFAULT_FIXTURE, _PrefetchingEmbedder, collect, evaluate, load_fixture, sweep
from ..service import MemoryService, shared_embedder
from ..settings import load_settings


def calibrate(fixture_path: str | Path = DEFAULT_FIXTURE, *, settings=None, embedder=None) -> dict[str, Any]:
    """Build a temporary store from the fixture, collect signals and sweep the floors."""
    fixture = json.loads(Path(fixture_path).read_text())
    settings = settings or load_settings()
    if embedder is None:
        embedder = shared_embedder(settings.embedder)
    texts = [r["content"] for r in fixture["records"]] + list(fixture.get("distractors", [])) + [q["query"] for q in fixture["queries"]]
    embedder = _PrefetchingEmbedder(embedder, texts)
    with tempfile.TemporaryDirectory() as tmp:
        service = MemoryService.open(Path(tmp) / "calibration.sqlite", settings, clock=FixedClock("2026-03-05T10:00:00Z"),
                                     embedder=embedder)
        try:
            ids = load_fixture(service, fixture)
            signals = collect(service, fixture, ids)
            result = sweep(signals)
            result["embedder"] = {"model": service.embedder.model_name, "version": service.embedder.model_version}
            result["configured"] = evaluate(signals, settings.retrieval.cosine_floor, settings.retrieval.bm25_floor)
        finally:
            service.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixture", default=str(DEFAULT_FIXTURE))
    parser.add_argument("--out", help="write the full result as JSON here")
    args = parser.parse_args()
    result = calibrate(args.fixture)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(json.dumps({k: result[k] for k in ("embedder", "chosen", "configured", "cosine_band_f1_within_90pct_bm25_off", "bm25_values")},
                     indent=2, default=str))


if __name__ == "__main__":
    main()
