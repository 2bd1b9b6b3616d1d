"""LoCoMo retrieval quality: recall per pipeline stage, the off-topic check and gate calibration.

    nice -n 10 .venv/bin/python -m benchmarks.locomo_eval            # all ten conversations
    nice -n 10 .venv/bin/python -m benchmarks.locomo_eval --limit 2  # a quick look

The dataset is read from ../shared/data/locomo/locomo10.json (or $MEMORY_LOCOMO_PATH); it is
never copied into the repository. One store per run (benchmarks/out/locomo.sqlite): each
conversation becomes one user's memory, written turn by turn through the real write path
(memory_core/eval/ingest.py). Then, as an agent with a read grant on that user:

- every category 1–4 question with evidence is asked through the memory_search tool, and each
  search's log row gives the ranking of every stage (dense, lexical, entity, fused, fused with
  freshness, gated, collapsed, returned): the ablations come from the same searches;
- the answerable questions of another conversation are asked too (off-topic: the right answer
  is empty);
- the gate floors are swept over those labelled searches (memory_core/eval/calibration.py), and
  each configured variant (by default the recommended floors) is run again in full.

Writes benchmarks/out/locomo_eval.json (every question), benchmarks/results/locomo.{json,md},
figures under benchmarks/results/locomo/, and the LoCoMo sections of benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from memory_core.eval import calibration as cal  # noqa: E402
from memory_core.eval.locomo import default_path, load_locomo  # noqa: E402
from memory_core.eval.locomo_run import ask_all, build_store  # noqa: E402
from memory_core.eval.retrieval_eval import aggregate, off_topic_summary, stage_latency  # noqa: E402
from memory_core.eval.scenarios import summary_rows  # noqa: E402

from .locomo_report import write_reports  # noqa: E402
from .stats import machine  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
DEFAULT_VARIANTS = [
    "calibrated: cosine_floor=calibrated, bm25_floor=calibrated",
    "calibrated, half-life 365 d: cosine_floor=calibrated, bm25_floor=calibrated, freshness_half_life_days=365",
    "calibrated, no freshness: cosine_floor=calibrated, bm25_floor=calibrated, freshness_weight=0",
    "proposed settings: cosine_floor=calibrated, bm25_floor=calibrated, freshness_weight=0, rrf_k=5",
    "proposed, cosine floor 0.45: cosine_floor=0.45, bm25_floor=calibrated, freshness_weight=0, rrf_k=5",
]


def parse_variant(text: str) -> tuple[str, dict[str, str]]:
    """``"name: key=value, key=value"`` → (name, {key: value}); ``calibrated`` is a value too."""
    name, _, rest = text.partition(":")
    pairs = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, _, value = item.partition("=")
        pairs[key.strip()] = value.strip()
    return name.strip(), pairs


def variant_settings(base, pairs: dict[str, str], recommended: dict):
    """Retrieval settings with ``pairs`` applied (``calibrated`` takes the recommended floor)."""
    updates = {}
    for key, value in pairs.items():
        if value == "calibrated":
            updates[key] = recommended[key]
        else:
            updates[key] = type(getattr(base, key))(value) if not isinstance(getattr(base, key), bool) else value == "true"
    return base.model_copy(update=updates)


def summarise(run: dict) -> dict:
    """The numbers of one pass: per-view aggregates, gate outcome, latency."""
    agg = aggregate(run["outcomes"])
    off = off_topic_summary([obs for _, obs in run["off_topic"]])
    observations = [o.observation for o in run["outcomes"]] + [obs for _, obs in run["off_topic"]]
    return {"aggregate": agg, "off_topic": off, "false_empty": agg["overall"]["false_empty"],
            "correct_empty": off["correct_empty"], "latency_ms": stage_latency(observations),
            "searches": len(observations), "errors": run["errors"], "seconds": run["seconds"]}


def cross_validate(conversations, features) -> dict:
    """Two folds by conversation: calibrate on one half, measure the picked floors on the other."""
    folds = [{c.sample_id for i, c in enumerate(conversations) if i % 2 == k} for k in (0, 1)]

    def fold_of(f):
        owner = f.qid.split("<-")[0] if "<-" in f.qid else f.qid.split("#")[0]
        return 0 if owner in folds[0] else 1

    out = []
    for k in (0, 1):
        train = [f for f in features if fold_of(f) == k]
        test = [f for f in features if fold_of(f) != k]
        if not train or not test:
            continue
        pick = cal.calibrate(train)["recommended"]
        out.append({"train": sorted(folds[k]), "picked": {"cosine_floor": pick["cosine_floor"], "bm25_floor": pick["bm25_floor"]},
                    "held_out": cal.evaluate_floors(test, pick["cosine_floor"], pick["bm25_floor"], use_entity=False),
                    "held_out_with_entity": cal.evaluate_floors(test, pick["cosine_floor"], pick["bm25_floor"])})
    return {"folds": out}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--batch-size", type=int, default=64, help="texts per embedding batch during ingestion")
    parser.add_argument("--no-speaker-mentions", action="store_true", help="do not link each turn to its speaker entity")
    parser.add_argument("--variant", action="append", default=None,
                        help="extra pass with changed retrieval settings, e.g. 'no-freshness: freshness_weight=0' "
                             "('calibrated' as a value takes the recommended floor); default: the calibrated floors")
    parser.add_argument("--max-false-empty", type=float, default=0.05, help="false-empty target used to pick the floors")
    parser.add_argument("--no-readme", action="store_true", help="do not update benchmarks/README.md")
    parser.add_argument("--no-vector-cache", action="store_true",
                        help="embed everything afresh instead of reusing benchmarks/out/locomo-vectors.npz from a previous run")
    parser.add_argument("--embed-queries-per-search", action="store_true",
                        help="embed each question inside its search instead of batch-embedding all questions up front")
    args = parser.parse_args(argv)

    wall = time.perf_counter()
    conversations = load_locomo(limit=args.limit)
    print(f"LoCoMo: {len(conversations)} conversations, {sum(len(c.turns) for c in conversations)} turns, "
          f"{sum(len(c.answerable()) for c in conversations)} answerable questions (from {default_path()})", flush=True)
    store = build_store(conversations, OUT / "locomo.sqlite", batch_size=args.batch_size,
                        mention_speakers=not args.no_speaker_mentions, prime_questions=not args.embed_queries_per_search,
                        vector_cache=None if args.no_vector_cache else OUT / "locomo-vectors.npz")
    service, ingests, timings = store.service, store.ingests, store.timings
    try:
        passes = {"default": ask_all(store, conversations)}
        guards, scenario_results = cal.scenario_guards(OUT / "scenarios", settings=service.settings, embedder=service.embedder.inner)
        calibration = cal.calibrate(passes["default"]["features"], guards=guards, max_false_empty=args.max_false_empty)
        calibration["tradeoff"] = cal.tradeoff(passes["default"]["features"], guards, cal.frange(0.38, 0.52, 0.01),
                                               calibration["recommended"]["bm25_floor"])
        recommended = calibration["recommended"]
        print(f"  recommended floors: cosine {recommended['cosine_floor']}, BM25 {recommended['bm25_floor']} "
              f"(F1 {recommended['f1']:.3f}, correct-empty {recommended['correct_empty']:.3f}, false-empty {recommended['false_empty']:.3f})")
        variants = args.variant if args.variant is not None else DEFAULT_VARIANTS
        variant_specs = {}
        for text in variants:
            name, pairs = parse_variant(text)
            settings = variant_settings(service.settings.retrieval, pairs, recommended)
            variant_specs[name] = pairs | {k: str(getattr(settings, k)) for k in pairs}
            passes[name] = ask_all(store, conversations, settings=settings, label=name)
        summaries = {name: summarise(run) for name, run in passes.items()}
        default_settings = service.settings.retrieval.model_dump(mode="json")
        duplicate_threshold = service.settings.write.duplicate_threshold
        stats = service.stats()
    finally:
        service.close()
    timings["total_s"] = time.perf_counter() - wall

    ingest_summary = {cid: r.summary() | {"merged_turns": r.merged_turns} for cid, r in ingests.items()}
    evidence_turns = {(c.sample_id, t) for c in conversations for q in c.answerable() for t in q.evidence}
    merged_all = {(cid, t) for cid, r in ingests.items() for t in r.merged_turns}
    result = {
        "dataset": {"path": str(default_path()), "conversations": len(conversations),
                    "turns": sum(len(c.turns) for c in conversations),
                    "answerable_questions": sum(len(c.answerable()) for c in conversations),
                    "dropped_evidence_ids": sum(len(c.dropped_evidence) for c in conversations)},
        "ingest": {"per_conversation": ingest_summary, "records": stats["records"],
                   "merged_turns": len(merged_all), "merged_evidence_turns": len(merged_all & evidence_turns),
                   "speaker_mentions": not args.no_speaker_mentions},
        "embedder": stats["embedder"], "settings": default_settings, "duplicate_threshold": duplicate_threshold, "variants": variant_specs,
        "passes": summaries, "calibration": {k: v for k, v in calibration.items() if k != "grid"},
        "cross_validation": cross_validate(conversations, passes["default"]["features"]),
        "scenarios": summary_rows(scenario_results),
        "timings": timings, "machine": machine(),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    detail = {"summary": result, "questions": {name: [
        {"qid": o.question.qid, "category": o.question.category, "evidence": list(o.question.evidence),
         "search_id": o.observation.search_id, "scores": o.scores, "empty": o.observation.empty,
         "best_cosine": o.observation.best_cosine, "best_bm25": o.observation.best_bm25}
        for o in run["outcomes"]] for name, run in passes.items()}}
    detail["gate_features"] = {"locomo": [f.__dict__ for f in passes["default"]["features"]], "scenario_guards": [g.__dict__ for g in guards]}
    (OUT / "locomo_eval.json").write_text(json.dumps(detail, indent=1, default=str) + "\n")
    write_reports(result, passes, calibration, update_readme=not args.no_readme, limit=args.limit)
    for name, s in summaries.items():
        overall = s["aggregate"]["overall"]
        print(f"[{name}] R@10 full {overall['full']['recall@10']:.3f} | dense {overall['dense']['recall@10']:.3f} | "
              f"lexical {overall['lexical']['recall@10']:.3f} | fused {overall['fused']['recall@10']:.3f} | "
              f"correct-empty {s['correct_empty']:.3f} | false-empty {s['false_empty']:.3f} | search p50 "
              f"{s['latency_ms']['total']['p50']:.1f} ms")
    print(f"total {timings['total_s']:.0f} s; wrote {OUT / 'locomo_eval.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
