"""``agent-memory calibrate``: re-derive the gate floors for the configured embedder.

Builds a scratch store from LoCoMo (never the user's store), asks every answerable question of
its own conversation and of another conversation, sweeps the cosine and BM25 floors over those
logged searches and prints the recommended floors as settings lines. Run it after any embedder
change; docs/calibration.md explains the procedure and how to read the output.
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
    parser.add_argument("--max-false-empty", type=float, default=0.05,
                        help="largest share of answerable questions the gate may empty (default 0.05)")
    parser.add_argument("--no-speaker-mentions", action="store_true",
                        help="do not link turns to their speaker entity (calibrates the floors without entity matches)")
    parser.add_argument("--json", default=None, help="also write the full sweep to this JSON file")


def run(args: argparse.Namespace) -> int:
    """Build the labelled set, sweep, print the pick; returns the exit code."""
    from .calibration import calibrate
    from .scenarios import scenario_guards
    from .locomo import load_locomo
    from .locomo_run import ask_all, build_store

    began = time.perf_counter()
    conversations = load_locomo(args.dataset, limit=args.limit)
    with tempfile.TemporaryDirectory(prefix="calibrate-") as tmp:
        scratch = Path(args.scratch or tmp) / "calibration.sqlite"
        store = build_store(conversations, scratch, mention_speakers=not args.no_speaker_mentions, progress=None)
        try:
            run_ = ask_all(store, conversations, progress=None)
            embedder = store.service.stats()["embedder"]
            current = store.service.settings.retrieval
            guards, _ = scenario_guards(Path(args.scratch or tmp) / "scenarios", settings=store.service.settings,
                                        embedder=store.service.embedder.inner)
        finally:
            store.service.close()
    report = calibrate(run_["features"], guards=guards, max_false_empty=args.max_false_empty)
    pick, sep = report["recommended"], report["separation"]
    print(f"embedder {embedder['model']} (version {embedder['version']}); {sep['answerable']} answerable and "
          f"{sep['off_topic']} off-topic LoCoMo questions; {time.perf_counter() - began:.0f} s")
    print(f"separation AUC: cosine {sep['cosine_auc']:.3f}, BM25 {sep['bm25_auc']:.3f}; entity matches on "
          f"{sep['entity_rate_answerable']:.1%} answerable / {sep['entity_rate_off_topic']:.1%} off-topic")
    for key in ("cosine", "bm25"):
        sweep = report[key]
        band = "–".join(f"{v:g}" for v in sweep["band"]) if sweep["band"] else "none"
        print(f"{key} floor alone: best {sweep['best_value']:g} (F1 {sweep['best_f1']:.3f}); 90%-of-best band {band}")
    free, lost = report["recommended_unguarded"], report["unguarded_guards"]["lost"]
    print(f"LoCoMo only: cosine floor {free['cosine_floor']:g}, BM25 floor {free['bm25_floor']:g} -> F1 {free['f1']:.3f}, "
          f"correct-empty {free['correct_empty']:.3f}, false-empty {free['false_empty']:.3f}; loses {len(lost)} of "
          f"{report['recommended_guards']['positives']} scenario queries")
    print(f"recommended: cosine floor {pick['cosine_floor']:g}, BM25 floor {pick['bm25_floor']:g} -> F1 {pick['f1']:.3f}, "
          f"correct-empty {pick['correct_empty']:.3f}, false-empty {pick['false_empty']:.3f}"
          + ("" if pick["met_false_empty_target"] else f" (false-empty target {args.max_false_empty} not reachable)"))
    print(f"currently configured: cosine floor {current.cosine_floor:g}, BM25 floor {current.bm25_floor:g}")
    print(f"MEMORY_RETRIEVAL__COSINE_FLOOR={pick['cosine_floor']:g}")
    print(f"MEMORY_RETRIEVAL__BM25_FLOOR={pick['bm25_floor']:g}")
    if args.json:
        Path(args.json).write_text(json.dumps({"embedder": embedder, **report}, indent=1, default=str) + "\n")
    return 0
