"""The two ranking constants issue 31 asks about, measured from one LoCoMo open pass.

    nice -n 10 .venv/bin/python -m benchmarks.ranking_sweep            # about 6 min here
    nice -n 10 .venv/bin/python -m benchmarks.ranking_sweep --limit 2  # a quick look

1. **Episodic freshness** (``freshness_weight``, ``freshness_scope``, ``freshness_half_life_days``).
   LoCoMo: the open pass (gate open, freshness off, as in ``benchmarks.locomo_eval``) is replayed
   with the shipped fusion, gate and result floor and each freshness variant
   (:mod:`memory_core.eval.ablation`: the pipeline's own pure functions over the logged lists), and
   scored overall, on the temporal category, on the questions the recency test picks out, and per
   half. Then the hand-written latest-decision worlds (``tests/data/latest_decisions``: several
   dated decisions on one topic, queries for the newest one and control queries for older ones) are
   run through the real pipeline (:class:`~memory_core.eval.scenarios.ScenarioRunner`, packaged
   MiniLM) under the same variants, counting the searches whose first result is the expected record.
2. **The semantic floor** (``cosine_floor``): the gate's decision replayed from the same open pass
   with every other floor as shipped and the cosine floor from 0.30 to 0.60, per half, with the
   guard set's errors (``tests/data/gate_calibration.json`` and the scenario suite's gate searches,
   exactly the calibrator's guards) and the F1 of "answer when answerable" (positives: answerable
   questions that get results; negatives: off-topic and named off-topic questions).

Writes benchmarks/out/ranking_sweep.{json,md}. The tables in docs/calibration.md are copied from it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from memory_core import load_settings  # noqa: E402
from memory_core.eval import ablation as abl  # noqa: E402
from memory_core.eval import gate_calibration as gc  # noqa: E402
from memory_core.eval.gate_fixture import fixture_features  # noqa: E402
from memory_core.eval.locomo import load_locomo  # noqa: E402
from memory_core.eval.locomo_run import ask_all, build_store  # noqa: E402
from memory_core.eval.scenarios import ScenarioRunner, load_scenarios, scenario_guards  # noqa: E402
from memory_core.retrieve import freshness  # noqa: E402
from memory_core.retrieve.freshness import asks_about_recency  # noqa: E402

from .locomo_eval import folds_of  # noqa: E402
from .stats import load_average, machine, markdown_table, save  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
# The first set was written before any score was seen; the second after the first set's scores and
# before the recency test was extended (so it is a check of that change, written by the same hand).
WORLD_SETS = {"first": HERE.parent / "tests" / "data" / "latest_decisions",
              "second": HERE.parent / "tests" / "data" / "latest_decisions_second"}
# The newest decision of each world (what a "what holds now" query must put first); every other
# search of a world is a control asking for an older decision by its details.
LATEST = {"latest_decision.atlas_database": "db3", "latest_decision.release_date": "rel3",
          "latest_decision.summer_holiday": "hol3", "latest_decision.pro_pricing": "pr3",
          "latest_decision.dynamo_office": "off3", "latest_decision.race_plan": "run3",
          "latest_decision.ember_payments": "pay3"}
RECENCY_TESTS = {"extended": freshness.RECENCY_WORDS, "previous": freshness.PREVIOUS_RECENCY_WORDS}
WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
SCOPES = ("recency_questions", "always")
HALF_LIVES = (30.0, 90.0, 365.0)
COSINE_FLOORS = [round(0.30 + 0.01 * i, 2) for i in range(31)]


def freshness_variants() -> list[dict]:
    """Weight 0 once, then every weight x scope x half-life with the recency test as shipped, and
    every weight x half-life of the recency-questions scope with the previous recency test."""
    base = {"freshness_weight": 0.0, "freshness_scope": "recency_questions", "freshness_half_life_days": 90.0}
    out = [{**base, "recency_test": "extended"}]
    for test, scopes in (("extended", SCOPES), ("previous", ("recency_questions",))):
        for scope in scopes:
            for half_life in HALF_LIVES:
                out += [{"freshness_weight": w, "freshness_scope": scope, "freshness_half_life_days": half_life, "recency_test": test}
                        for w in WEIGHTS if w > 0]
    return out


@contextlib.contextmanager
def recency_test(name: str):
    """Run with one of the two recency tests (the pipeline and the replay both call freshness.asks_about_recency)."""
    shipped = freshness.RECENCY_WORDS
    freshness.RECENCY_WORDS = RECENCY_TESTS[name]
    try:
        yield
    finally:
        freshness.RECENCY_WORDS = shipped


def settings_of(variant: dict) -> dict:
    return {k: v for k, v in variant.items() if k != "recency_test"}


def locomo_freshness(questions, covers, folds, shipped, variant: dict) -> dict:
    """One freshness variant replayed over the open pass with the shipped fusion, gate and result floor."""
    base = abl.ladder(shipped)[-1][1]  # the shipped configuration as replayed (gate, result floor, known-name model)
    replay = base.with_(freshness_weight=variant["freshness_weight"], freshness_half_life_days=variant["freshness_half_life_days"],
                        freshness_scope=variant["freshness_scope"])
    with recency_test(variant["recency_test"]):
        return _scored(questions, covers, folds, replay, variant)


def _scored(questions, covers, folds, replay, variant: dict) -> dict:
    answerable = [q for q in questions if q.answerable]
    recency = [q for q in answerable if asks_about_recency(q.query)]
    scores = abl.score_replay(questions, replay, covers)
    row = {**variant, "recall@10": scores["overall"]["recall@10"], "recall@5": scores["overall"]["recall@5"],
           "temporal_recall@10": scores.get("2", {}).get("recall@10"), "false_empty": scores["overall"]["empty"],
           "recency_questions": len(recency),
           "recency_recall@10": abl.score_replay(recency, replay, covers)["overall"]["recall@10"] if recency else None}
    for fold in (0, 1):
        subset = [q for q in questions if abl.fold_of_question(q, folds) == fold]
        half = abl.score_replay(subset, replay, covers)
        row[f"half_{fold}"] = {"recall@10": half["overall"]["recall@10"], "temporal_recall@10": half.get("2", {}).get("recall@10")}
    return row


def world_results(workdir: Path, embedder, variant: dict, worlds: Path) -> dict:
    """The latest-decision worlds under one freshness variant: first results right, latest vs control."""
    settings = load_settings(extraction={"extract_on_session_end": False}, retrieval=settings_of(variant))
    runner = ScenarioRunner(workdir, embedder=embedder, settings=settings)
    counts = {"latest": [0, 0], "control": [0, 0]}
    failures, errors, empty = [], [], 0
    for world in load_scenarios(worlds):
        with recency_test(variant["recency_test"]):
            result = runner.run(world)
        if result.error:
            errors.append(f"{world.id}: {result.error}")
            continue
        for check in result.checks:
            if not check.what.startswith("top result"):
                if not check.ok:
                    errors.append(f"{world.id} step {check.step}: {check.what} ({check.detail})")
                continue
            step = world.steps[check.step - 1]
            ref = step["expect"]["top"].lstrip("$")
            kind = "latest" if ref == LATEST[world.id] else "control"
            counts[kind][0] += check.ok
            counts[kind][1] += 1
            if not check.ok:
                came_back_empty = "logged results []" in check.detail
                empty += came_back_empty
                failures.append(f"{world.id}: {step['tool']['args']['query']!r} wanted {ref} ({kind})"
                                + ("; the gate returned nothing" if came_back_empty else ""))
    return {**variant, "latest_right": counts["latest"][0], "latest_searches": counts["latest"][1], "empty": empty,
            "control_right": counts["control"][0], "control_searches": counts["control"][1], "wrong": failures, "errors": errors}


def f1(outcome: dict, counts: dict) -> float:
    """F1 of "return something" with answerable questions as positives (off-topic and named as negatives)."""
    positives = counts.get("answerable", 0)
    tp = (1 - outcome["false_empty"]) * positives
    fp = sum((1 - outcome[f"correct_empty_{kind}"]) * counts.get(kind, 0) for kind in ("off_topic", "named"))
    fn = outcome["false_empty"] * positives
    return round(2 * tp / (2 * tp + fp + fn), 4) if tp else 0.0


def floor_curve(features, guards, folds, shipped) -> list[dict]:
    """The gate replayed at each cosine floor, every other floor as shipped: per half and the guards."""
    floors = {name: getattr(shipped, name) for name in gc.ALL_FLOORS}
    rows = []
    for value in COSINE_FLOORS:
        point = floors | {"cosine_floor": value}
        row = {"cosine_floor": value}
        for k in (0, 1):
            mine = [f for f in features if gc.fold_of(f, folds) == k]
            got = gc.outcome(mine, point)
            row[f"half_{k}"] = {key: round(got[key], 4) for key in ("false_empty", "correct_empty_off_topic", "correct_empty_named",
                                                                     "correct_empty_named_verified")}
            row[f"half_{k}"]["f1"] = f1(got, got["questions"])
        every = gc.outcome(features, point)
        row["all"] = {"false_empty": round(every["false_empty"], 4), "correct_empty_off_topic": round(every["correct_empty_off_topic"], 4),
                      "correct_empty_named": round(every["correct_empty_named"], 4), "f1": f1(every, every["questions"])}
        errors = gc.guard_errors(guards, point)
        row["guards"] = {"lost": errors["lost"], "leaked": errors["leaked"], "positives": errors["positives"],
                         "negatives": errors["negatives"]}
        rows.append(row)
    return rows


def render(data: dict) -> str:
    lines = [f"LoCoMo open pass replayed ({data['questions']['answerable']} answerable questions, "
             f"{data['questions']['recency']} of them picked by the recency test as shipped, "
             f"{data['questions'].get('recency_previous_test')} by the previous one); load {data['load_average_before']} → "
             f"{data['load_average_after']}.", ""]
    rows = []
    key = lambda v: (v["freshness_weight"], v["freshness_scope"], v["freshness_half_life_days"], v["recency_test"])  # noqa: E731
    sets = {name: {key(w): w for w in runs} for name, runs in data["worlds"].items()}
    for r in data["freshness"]:
        w1, w2 = (sets[name].get(key(r), {}) for name in ("first", "second"))
        rows.append([r["freshness_weight"], r["freshness_scope"], r["freshness_half_life_days"], r["recency_test"], f"{r['recall@10']:.3f}",
                     f"{r['temporal_recall@10']:.3f}", "-" if r["recency_recall@10"] is None else f"{r['recency_recall@10']:.3f}",
                     f"{r['half_0']['recall@10']:.3f} / {r['half_1']['recall@10']:.3f}",
                     f"{r['half_0']['temporal_recall@10']:.3f} / {r['half_1']['temporal_recall@10']:.3f}",
                     f"{w1.get('latest_right', '-')}/{w1.get('latest_searches', '-')} ({w1.get('empty', '-')} empty)",
                     f"{w1.get('control_right', '-')}/{w1.get('control_searches', '-')}",
                     f"{w2.get('latest_right', '-')}/{w2.get('latest_searches', '-')} ({w2.get('empty', '-')} empty)",
                     f"{w2.get('control_right', '-')}/{w2.get('control_searches', '-')}"])
    lines.append(markdown_table(["weight", "scope", "half-life d", "recency test", "R@10", "R@10 temporal", "R@10 recency questions",
                                 "R@10 half A / B", "temporal half A / B", "first set: newest decision first",
                                 "first set: controls first", "second set: newest first", "second set: controls first"], rows))
    lines += ["", "Cosine floor, every other floor as shipped (gate decision replayed; F1 of answering when answerable):", ""]
    rows = []
    for r in data["cosine_floor"]:
        a, b = r["half_0"], r["half_1"]
        rows.append([r["cosine_floor"], f"{a['false_empty']:.3f} / {b['false_empty']:.3f}",
                     f"{a['correct_empty_off_topic']:.3f} / {b['correct_empty_off_topic']:.3f}",
                     f"{a['correct_empty_named']:.3f} / {b['correct_empty_named']:.3f}", f"{a['f1']:.4f} / {b['f1']:.4f}",
                     f"{r['all']['f1']:.4f}", f"{len(r['guards']['lost'])} / {len(r['guards']['leaked'])}"])
    lines.append(markdown_table(["cosine floor", "false-empty A / B", "correct-empty off-topic A / B", "named A / B", "F1 A / B",
                                 "F1 all", "guards lost / leaked"], rows))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    data = {"machine": machine(), "load_average_before": load_average()}
    conversations = load_locomo(limit=args.limit)
    store = build_store(conversations, OUT / "ranking-sweep.sqlite", vector_cache=OUT / "locomo-vectors.npz")
    service = store.service
    shipped = service.settings.retrieval
    folds = folds_of(conversations)
    try:
        open_settings = shipped.model_copy(update={"cosine_floor": -1.0, "name_rest_cosine": -1.0, "name_model_floor": -1.0,
                                                   "freshness_weight": 0.0})
        open_run = ask_all(store, conversations, settings=open_settings, label="open")
        questions = abl.logged_questions(store, conversations, open_run)
        covers = {c.sample_id: store.ingests[c.sample_id].covers for c in conversations}
        answerable = [q for q in questions if q.answerable]
        data["questions"] = {"answerable": len(answerable), "recency": sum(asks_about_recency(q.query) for q in answerable),
                             "recency_examples": [q.query for q in answerable if asks_about_recency(q.query)][:12]}
        with recency_test("previous"):
            data["questions"]["recency_previous_test"] = sum(asks_about_recency(q.query) for q in answerable)
        variants = freshness_variants()
        data["freshness"] = [locomo_freshness(questions, covers, folds, shipped, v) for v in variants]
        print("freshness replayed", flush=True)
        with tempfile.TemporaryDirectory(prefix="latest-decisions-") as workdir:
            data["worlds"] = {name: [] for name in WORLD_SETS}
            for variant in variants:
                for name, directory in WORLD_SETS.items():
                    got = world_results(Path(workdir), service.embedder.inner, variant, directory)
                    data["worlds"][name].append(got)
                    print(f"  {name} worlds {variant}: latest {got['latest_right']}/{got['latest_searches']} ({got['empty']} empty), "
                          f"controls {got['control_right']}/{got['control_searches']}", flush=True)
            guards, _ = scenario_guards(Path(workdir) / "guards", settings=service.settings, embedder=service.embedder.inner)
        guards += fixture_features(settings=service.settings, embedder=service.embedder.inner)
        data["cosine_floor"] = floor_curve(open_run["features"], guards, folds, shipped)
        data["shipped"] = {"cosine_floor": shipped.cosine_floor, "freshness_weight": shipped.freshness_weight,
                           "recency_test": freshness.RECENCY_WORDS.pattern,
                           "freshness_scope": shipped.freshness_scope, "freshness_half_life_days": shipped.freshness_half_life_days}
    finally:
        service.close()
    data["load_average_after"] = load_average()
    data["seconds"] = round(time.perf_counter() - began, 1)
    text = render(data)
    save("ranking_sweep", data, text, directory=OUT)
    print(text)
    print(f"total {data['seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
