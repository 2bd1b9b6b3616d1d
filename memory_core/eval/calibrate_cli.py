"""``agent-memory calibrate``: re-derive the gate floors for the configured embedder.

Builds a scratch store from LoCoMo (never the user's store), asks every answerable question of its
own conversation and the off-topic and named off-topic questions with the gate open, adds the
fixture (tests/data/gate_calibration.json) and the scenario suite as guard queries, and runs the
one gate calibrator (memory_core/eval/gate_calibration.py): floors picked on one half of the
conversations, reported on the other, both ways. Prints the first half's pick as settings lines.
Run it after any embedder change; docs/calibration.md explains the procedure and the output.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", default=None, help="locomo10.json (default: ../shared/data/locomo/ or $MEMORY_LOCOMO_PATH)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations (faster, noisier)")
    parser.add_argument("--scratch", default=None, help="directory for the scratch store (default: a temporary directory)")
    parser.add_argument("--max-false-empty", type=float, default=0.02,
                        help="largest share of answerable questions the gate may empty on the training half (default 0.02)")
    parser.add_argument("--json", default=None, help="also write the full report to this JSON file")


def run(args: argparse.Namespace) -> int:
    """Build the labelled sets, calibrate, print the pick; returns the exit code."""
    from .gate_calibration import ALL_FLOORS, calibrate
    from .gate_fixture import fixture_features
    from .ingest import user_id_for
    from .scenarios import scenario_guards
    from .locomo import load_locomo
    from .locomo_run import ask_all, build_store

    from ..store.urls import file_path

    # the paths are checked before the long run, not at its end
    output = file_path(args.json, field="--json", what="a file to write the report to") if args.json else None
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
    if args.scratch:
        file_path(args.scratch, field="--scratch", what="a directory for the scratch store")
    began = time.perf_counter()
    conversations = load_locomo(args.dataset, limit=args.limit)
    folds = [{user_id_for(c) for i, c in enumerate(conversations) if i % 2 == k} for k in (0, 1)]
    with tempfile.TemporaryDirectory(prefix="calibrate-") as tmp:
        scratch = Path(args.scratch or tmp)
        store = build_store(conversations, scratch / "calibration.sqlite", progress=None)
        try:
            current = store.service.settings.retrieval
            opened = ask_all(store, conversations, settings=current.model_copy(update={"cosine_floor": -1.0, "name_rest_cosine": -1.0, "name_model_floor": -1.0, "freshness_weight": 0.0}),
                             progress=None)
            embedder = store.service.stats()["embedder"]
            guards, _ = scenario_guards(scratch / "scenarios", settings=store.service.settings, embedder=store.service.embedder.inner)
            guards += fixture_features(settings=store.service.settings, embedder=store.service.embedder.inner)
        finally:
            store.service.close()
    report = calibrate(opened["features"], folds, guards=guards, max_false_empty=args.max_false_empty)
    sep = report["separation"]
    print(f"embedder {embedder['model']} (version {embedder['version']}); {sep['answerable']} answerable and {sep['negative']} "
          f"unanswerable LoCoMo questions, {report['guard_samples']} guard queries; {time.perf_counter() - began:.0f} s")
    print(f"separation AUC: cosine {sep['cosine_auc']:.3f}, lexical {sep['lexical_auc']:.3f}")
    for fold in report["folds"]:
        ho = fold["held_out"]
        print(f"picked on {', '.join(fold['train'])}: " + ", ".join(f"{n} {_value(fold['floors'][n])}" for n in ALL_FLOORS)
              + f" -> held out: false-empty {ho['false_empty']:.3f}, correct-empty {ho['correct_empty_off_topic']:.3f} "
              f"(named {ho['correct_empty_named']:.3f}); guards lost {len(fold['guards']['lost'])}, leaked {len(fold['guards']['leaked'])}")
    print("currently configured: " + ", ".join(f"{n} {_value(getattr(current, n))}" for n in ALL_FLOORS))
    for name in ALL_FLOORS:
        print(f"MEMORY_RETRIEVAL__{name.upper()}={_value(report['recommended'][name])}")
    if output is not None:
        output.write_text(json.dumps({"embedder": embedder, **report}, indent=1, default=str) + "\n")
    return 0


def _value(value) -> str:
    """A floor as a number, the known-name model's weights as the JSON list the settings read."""
    if isinstance(value, (list, tuple)):
        return json.dumps([float(v) for v in value])
    return f"{value:g}"
