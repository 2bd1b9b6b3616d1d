"""LoCoMo retrieval quality: ablations, the shipped pipeline per category, and gate calibration.

    nice -n 10 .venv/bin/python -m benchmarks.locomo_eval            # all ten conversations
    nice -n 10 .venv/bin/python -m benchmarks.locomo_eval --limit 2  # a quick look

The dataset is read from ../shared/data/locomo/locomo10.json (or $MEMORY_LOCOMO_PATH); it is
never copied into the repository. One store per run (benchmarks/out/locomo.sqlite): each
conversation becomes one user's memory, written turn by turn through the real write path
(memory_core/eval/ingest.py). Then, as an agent with a read grant on that user, three kinds of
question are asked: every category 1–4 question with evidence (answerable), another
conversation's questions (off-topic: the right answer is empty), and those off-topic questions
rewritten to name this conversation's speakers (named off-topic, memory_core/eval/locomo.py).

Two passes:

- the **open pass** (the gate open, freshness off) logs every candidate list and gate signal;
  the ablation table replays fusion, freshness and the gate over those logs one change at a time
  (memory_core/eval/ablation.py), and the gate calibrator (memory_core/eval/gate_calibration.py)
  picks floors on one half of the conversations and reports them on the other, both ways;
- the **shipped pass** asks everything with the default settings as shipped, through the same
  batch entry point (``Retriever.search_batch``, the request the memory_search tool builds): the
  per-category table, correct-empty, false-empty and stage latency.

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

from memory_core.eval import ablation as abl  # noqa: E402
from memory_core.eval import gate_calibration as gc  # noqa: E402
from memory_core.eval import named_fixture, named_labels  # noqa: E402
from memory_core.eval.gate_fixture import fixture_features  # noqa: E402
from memory_core.eval.ingest import user_id_for  # noqa: E402
from memory_core.eval.locomo import default_path, load_locomo  # noqa: E402
from memory_core.eval.locomo_run import READER, ask_all, build_store  # noqa: E402
from memory_core.eval.retrieval_eval import aggregate, off_topic_summary, stage_latency  # noqa: E402
from memory_core.eval.scenarios import scenario_guards, summary_rows  # noqa: E402

from .locomo_report import write_reports  # noqa: E402
from .stats import machine  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def per_half(run: dict, folds) -> dict:
    """False-empty, recall@10 and both named correct-empty rates on each half (A = 0, B = 1)."""
    out = {}
    for k in (0, 1):
        outcomes = [o for o in run["outcomes"] if o.observation.user_id in folds[k]]
        named = [(q, obs) for q, obs in run.get("named_off_topic", []) if obs.user_id in folds[k]]
        off = [obs for _, obs in run["off_topic"] if obs.user_id in folds[k]]
        verified = [obs for q, obs in named if not q.doubts]
        out[f"half_{k}"] = {
            "false_empty": sum(o.observation.empty for o in outcomes) / len(outcomes) if outcomes else None,
            "recall@10": sum(o.scores["full"]["recall@10"] for o in outcomes) / len(outcomes) if outcomes else None,
            "correct_empty": sum(o.empty for o in off) / len(off) if off else None,
            "correct_empty_named": sum(obs.empty for _, obs in named) / len(named) if named else None,
            "correct_empty_named_verified": sum(o.empty for o in verified) / len(verified) if verified else None}
    return out


def summarise(run: dict, folds) -> dict:
    """The numbers of one pass: per-view aggregates, both off-topic classes, latency."""
    agg = aggregate(run["outcomes"])
    off = off_topic_summary([obs for _, obs in run["off_topic"]])
    named = off_topic_summary([obs for _, obs in run.get("named_off_topic", [])]) if run.get("named_off_topic") else None
    verified = [obs for q, obs in run.get("named_off_topic", []) if not q.doubts]
    named_verified = off_topic_summary(verified) if verified else None
    observations = ([o.observation for o in run["outcomes"]] + [obs for _, obs in run["off_topic"]]
                    + [obs for _, obs in run.get("named_off_topic", [])])
    return {"aggregate": agg, "off_topic": off, "named_off_topic": named, "false_empty": agg["overall"]["false_empty"],
            "correct_empty": off["correct_empty"], "correct_empty_named": named["correct_empty"] if named else None,
            "named_verified": named_verified,
            "correct_empty_named_verified": named_verified["correct_empty"] if named_verified else None,
            "per_half": per_half(run, folds),
            "latency_ms": stage_latency(observations), "searches": len(observations), "errors": run["errors"],
            "seconds": run["seconds"]}


def folds_of(conversations) -> list[set[str]]:
    """Two halves by conversation order: even-numbered and odd-numbered conversations."""
    return [{user_id_for(c) for i, c in enumerate(conversations) if i % 2 == k} for k in (0, 1)]


def replay_table(questions, covers, settings, folds) -> list[dict]:
    """Each ablation row on all conversations and on each half."""
    rows = []
    for label, replay in abl.ladder(settings):
        row = {"label": label, "all": abl.score_replay(questions, replay, covers)}
        for fold in (0, 1):
            subset = [q for q in questions if abl.fold_of_question(q, folds) == fold]
            row[f"half_{fold}"] = abl.score_replay(subset, replay, covers) if subset else None
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--batch-size", type=int, default=64, help="texts per embedding batch during ingestion")
    parser.add_argument("--max-false-empty", type=float, default=0.02,
                        help="false-empty the calibrator allows on the training half (target 0.03 on the held-out half)")
    parser.add_argument("--no-readme", action="store_true", help="do not update benchmarks/README.md")
    parser.add_argument("--no-vector-cache", action="store_true",
                        help="embed everything afresh instead of reusing benchmarks/out/locomo-vectors.npz from a previous run")
    args = parser.parse_args(argv)

    wall = time.perf_counter()
    load_before = _loadavg()
    conversations = load_locomo(limit=args.limit)
    print(f"LoCoMo: {len(conversations)} conversations, {sum(len(c.turns) for c in conversations)} turns, "
          f"{sum(len(c.answerable()) for c in conversations)} answerable questions (from {default_path()})", flush=True)
    store = build_store(conversations, OUT / "locomo.sqlite", batch_size=args.batch_size,
                        vector_cache=None if args.no_vector_cache else OUT / "locomo-vectors.npz")
    service, ingests, timings = store.service, store.ingests, store.timings
    folds = folds_of(conversations)
    shipped_settings = service.settings.retrieval
    try:
        open_settings = shipped_settings.model_copy(update={"cosine_floor": -1.0, "name_rest_cosine": -1.0, "name_model_floor": -1.0, "freshness_weight": 0.0})
        open_run = ask_all(store, conversations, settings=open_settings, label="open")
        questions = abl.logged_questions(store, conversations, open_run)
        covers = {c.sample_id: ingests[c.sample_id].covers for c in conversations}
        began = time.perf_counter()
        guards, scenario_results = scenario_guards(OUT / "scenarios", settings=service.settings, embedder=service.embedder.inner)
        guards += fixture_features(settings=service.settings, embedder=service.embedder.inner)
        calibration = gc.calibrate(open_run["features"], folds, guards=guards, max_false_empty=args.max_false_empty)
        calibration["shipped"] = {name: getattr(shipped_settings, name) for name in gc.ALL_FLOORS}
        calibration["shipped_outcome"] = {
            f"half_{k}": gc.outcome([f for f in open_run["features"] if gc.fold_of(f, folds) == k], calibration["shipped"])
            for k in (0, 1)}
        calibration["shipped_guards"] = gc.guard_errors(guards, calibration["shipped"])
        timings["calibration_s"] = time.perf_counter() - began
        for fold in calibration["folds"]:
            print(f"  floors picked on {', '.join(fold['train'])}: {fold['floors']}; held out: false-empty "
                  f"{fold['held_out']['false_empty']:.3f}, correct-empty {fold['held_out']['correct_empty_off_topic']:.3f} "
                  f"(named {fold['held_out']['correct_empty_named']:.3f}, verified {fold['held_out']['correct_empty_named_verified']:.3f})",
                  flush=True)
        ablation = replay_table(questions, covers, shipped_settings, folds)
        rrf_choice = abl.choose_rrf_k(questions, covers, folds, k_per_generator=shipped_settings.candidates_per_generator,
                                      name_stripped=shipped_settings.rest_list_in_fusion)
        shipped_run = ask_all(store, conversations, label="shipped")
        # the short-list rule is not replayable from the open pass (it logs no short-list signals): one more pass without it
        no_short = ask_all(store, conversations, settings=shipped_settings.model_copy(update={"short_list_names_need_rest": False}),
                           label="shipped without the short-list rule")
        hand_labelled = named_fixture.ask_locomo(service, conversations, READER)
        passes = {"open": open_run, "shipped": shipped_run, "no_short_list_rule": no_short}
        summaries = {name: summarise(run, folds) for name, run in passes.items()}
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
                    "off_topic_questions": len(open_run["off_topic"]), "named_off_topic_questions": len(open_run["named_off_topic"]),
                    "named_labels": named_labels.summary([q for q, _ in open_run["named_off_topic"]]),
                    "named_label_check_on_answerable": named_labels.sensitivity(conversations),
                    "dropped_evidence_ids": sum(len(c.dropped_evidence) for c in conversations)},
        "ingest": {"per_conversation": ingest_summary, "records": stats["records"],
                   "merged_turns": len(merged_all), "merged_evidence_turns": len(merged_all & evidence_turns)},
        "embedder": stats["embedder"], "settings": shipped_settings.model_dump(mode="json"), "duplicate_threshold": duplicate_threshold,
        "folds": [sorted(f) for f in folds], "passes": summaries, "ablation": ablation, "rrf_k_choice": rrf_choice,
        "calibration": calibration, "scenarios": summary_rows(scenario_results), "timings": timings,
        "hand_labelled_named": hand_labelled,
        "machine": machine() | {"loadavg": f"{load_before} at the start, {_loadavg()} at the end"},
    }
    OUT.mkdir(parents=True, exist_ok=True)
    detail = {"summary": result, "questions": {name: [
        {"qid": o.question.qid, "category": o.question.category, "evidence": list(o.question.evidence),
         "search_id": o.observation.search_id, "scores": o.scores, "empty": o.observation.empty,
         "best_cosine": o.observation.best_cosine, "best_lexical": o.observation.best_lexical}
        for o in run["outcomes"]] for name, run in passes.items()}}
    detail["gate_features"] = {"locomo": [f.__dict__ for f in open_run["features"]], "guards": [g.__dict__ for g in guards]}
    (OUT / "locomo_eval.json").write_text(json.dumps(detail, indent=1, default=str) + "\n")
    write_reports(result, passes, update_readme=not args.no_readme, limit=args.limit)
    s = summaries["shipped"]
    overall = s["aggregate"]["overall"]
    print(f"[shipped] R@10 {overall['full']['recall@10']:.3f} | dense {overall['dense']['recall@10']:.3f} | "
          f"lexical {overall['lexical']['recall@10']:.3f} | fused {overall['fused_fresh']['recall@10']:.3f} | "
          f"correct-empty {s['correct_empty']:.3f} (named {s['correct_empty_named']:.3f}, verified "
          f"{s['correct_empty_named_verified']:.3f}) | false-empty {s['false_empty']:.3f} | "
          f"search p50 {s['latency_ms']['total']['p50']:.1f} ms")
    print(f"total {timings['total_s']:.0f} s; wrote {OUT / 'locomo_eval.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
