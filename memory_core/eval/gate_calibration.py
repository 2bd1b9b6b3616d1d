"""The gate calibrator: one procedure for every labelled set (LoCoMo, the fixture, the scenarios).

Each labelled query carries what its search's gate saw (the best value of each signal over the
candidates) and a label: answerable (its answer is in the store) or not (the right answer is
empty). The pipeline's gate lets a result set through when some candidate has cosine ≥
``cosine_floor``, or lexical score ≥ ``lexical_floor``, or an entity match with support (its
cosine ≥ ``entity_support_cosine``, or its lexical score on the non-name words ≥
``entity_support_lexical``). Those four best values decide the gate exactly, so any floors can be
evaluated on logged searches without searching again: :func:`passes` hands them (and the
known-name signals) to the pipeline's own decision, :func:`memory_core.retrieve.gate.passes`; the
calibrator keeps no copy of the gate.

The procedure (docs/calibration.md):

0. The gate signals: see the first paragraph; a query naming something no readable record holds
   (``unknown_names``) has its cosine compared with ``cosine_floor_unknown_name`` instead.
1. Collect labelled queries with the gate open: LoCoMo's answerable questions, its off-topic
   questions (another conversation's) and its *named* off-topic questions (the same, rewritten to
   name the asked store's speakers); the fixture ``tests/data/gate_calibration.json``; and the
   scenario suite's gate searches. LoCoMo is split into two halves by conversation.
2. On one half (the *train* half), sweep the four floors. A point is *admissible* when its
   false-empty rate on answerable questions is at most ``max_false_empty`` and it keeps every
   guard query (fixture and scenarios) right, or, if no point does, loses the fewest. Among
   admissible points pick the highest correct-empty over both off-topic classes (mean of the
   two), then the lowest false-empty, then the lowest floors.
3. Report the pick on the other half (*held out*), and do the same with the halves swapped. The
   shipped defaults are the pick of the first fold; the numbers reported for them are the
   held-out half's.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..retrieve import gate
from . import name_model_fit
from .metrics import auc, frange

FLOOR_NAMES = ("cosine_floor", "cosine_floor_unknown_name", "lexical_floor", "entity_support_cosine", "entity_support_lexical")
REST_NAMES = ("name_rest_cosine", "name_rest_lexical")  # the known-name rule, swept second (``sweep_rest``)
MODEL_NAMES = ("name_model_floor", "name_model_weights")  # the known-name model, fitted third (name_model_fit)
ALL_FLOORS = FLOOR_NAMES + REST_NAMES + MODEL_NAMES
DISABLED = math.inf
REST_OFF = {"name_rest_cosine": -1.0, "name_rest_lexical": 1.0, "name_model_floor": -1.0, "name_model_weights": None}
GRID = {
    "cosine_floor": frange(0.34, 0.56, 0.01),
    "cosine_floor_unknown_name": [*frange(0.45, 0.70, 0.05), DISABLED],
    "lexical_floor": [*frange(0.40, 1.00, 0.05), DISABLED],
    "entity_support_cosine": [*frange(0.20, 0.56, 0.02), DISABLED],
    "entity_support_lexical": [*frange(0.20, 1.00, 0.10), DISABLED],
}
MODEL_FLOOR_GRID = [-1.0, *frange(0.01, 0.95, 0.0025)]  # -1: the model off; fine steps, as probabilities bunch low
REST_GRID = {
    "name_rest_cosine": [-1.0, *frange(0.10, 0.50, 0.02)],  # -1: the rule off
    "name_rest_lexical": [*frange(0.30, 1.00, 0.10)],
}


@dataclass(frozen=True)
class GateFeatures:
    """What the gate saw for one labelled query: the best of each signal over its candidates."""

    qid: str
    answerable: bool
    cosine: float | None
    lexical: float | None
    entity_cosine: float | None = None  # best cosine among entity-matched candidates
    entity_rest: float | None = None  # best non-name lexical score among entity-matched candidates
    source: str = "locomo"
    unknown_name: bool = False  # the query names something no readable record holds
    known_name: bool = False  # the query names an entity the readable records know
    rest_cosine: float | None = None  # best cosine of the name-stripped query (known_name only)
    rest_lexical: float | None = None  # best lexical score on the words other than the names (known_name only)
    rest_both: float | None = None  # best rest cosine + 0.5 x lexical score of one candidate (known_name only)
    unheld_name: bool = False  # the query also spells a name no readable record holds (known_name only)
    doubted: bool = False  # named only: the label check doubts the memory lacks an answer (named_labels)
    rest_cover: float | None = None  # best stem coverage of the rest's key terms by one candidate (known_name only)
    rest_cover_joint: float | None = None  # best rest cosine + 0.5 x that coverage of one candidate (known_name only)
    rest_held: float | None = None  # share of the rest's key terms some readable record holds (known_name only)
    short_list: bool = False  # the query's known names link few records: the short-list rule judged it

    @property
    def kind(self) -> str:
        """answerable, off_topic or named (a LoCoMo off-topic question naming the store's speakers)."""
        if self.answerable:
            return "answerable"
        return "named" if self.qid.endswith("~named") else "off_topic"


def _col(features: list[GateFeatures], attr: str) -> np.ndarray:
    return np.array([getattr(f, attr) if getattr(f, attr) is not None else -np.inf for f in features], dtype=np.float64)


def gate_floors(floors: dict) -> gate.GateFloors:
    """The pipeline's floors for a calibrator setting (retrieval setting names; ``math.inf``
    disables a signal; the known-name rule is off where the setting does not give it)."""
    return gate.GateFloors(floors["cosine_floor"], floors["lexical_floor"], floors["entity_support_cosine"],
                           floors["entity_support_lexical"], floors["cosine_floor_unknown_name"],
                           floors.get("name_rest_cosine", -1.0), floors.get("name_rest_lexical", 1.0),
                           floors.get("name_model_floor", -1.0), tuple(floors.get("name_model_weights") or ()), True)


def gate_view(f: GateFeatures) -> tuple[gate.SetSignals, gate.NameRest | None]:
    """A logged query as the pipeline's gate sees it: the set's best signals and, for a query naming
    a known entity, the support the rest of it found."""
    signals = gate.SetSignals(f.cosine, f.lexical, f.entity_cosine, f.entity_rest, f.unknown_name)
    if not (f.known_name or f.short_list):
        return signals, None
    rest = gate.NameRest(("name",), f.rest_cosine, f.rest_lexical, both=f.rest_both, full_cosine=f.cosine, full_lexical=f.lexical,
                         unheld=("name",) if f.unheld_name else (), cover=f.rest_cover, cover_joint=f.rest_cover_joint,
                         held=f.rest_held, short=f.short_list and not f.known_name)
    return signals, rest


def passes(f: GateFeatures, floors: dict | gate.GateFloors) -> bool:
    """The gate's decision for one query with the given floors: the pipeline's own rule."""
    signals, rest = gate_view(f)
    return gate.passes(signals, floors if isinstance(floors, gate.GateFloors) else gate_floors(floors), rest)


def outcome(features: list[GateFeatures], floors: dict) -> dict:
    """Correct-empty per negative class, false-empty on answerable queries, and counts."""
    kinds: dict[str, list[bool]] = {}
    pipeline_floors = gate_floors(floors)
    for f in features:
        kinds.setdefault(f.kind, []).append(passes(f, pipeline_floors))
    out = {name: floors.get(name, REST_OFF.get(name)) for name in ALL_FLOORS}
    answerable = kinds.get("answerable", [])
    out["false_empty"] = 1 - sum(answerable) / len(answerable) if answerable else float("nan")
    for kind in ("off_topic", "named"):
        values = kinds.get(kind, [])
        out[f"correct_empty_{kind}"] = 1 - sum(values) / len(values) if values else float("nan")
    verified = [passes(f, pipeline_floors) for f in features if f.kind == "named" and not f.doubted]
    out["correct_empty_named_verified"] = 1 - sum(verified) / len(verified) if verified else float("nan")
    present = [out[f"correct_empty_{k}"] for k in ("off_topic", "named") if kinds.get(k)]
    out["correct_empty"] = sum(present) / len(present) if present else float("nan")
    out["questions"] = {kind: len(v) for kind, v in kinds.items()} | {"named_verified": len(verified)}
    return out


def guard_errors(guards: list[GateFeatures], floors: dict) -> dict:
    """Guard queries the floors get wrong: answerable ones emptied, off-topic ones let through."""
    pipeline_floors = gate_floors(floors)
    lost = [g.qid for g in guards if g.answerable and not passes(g, pipeline_floors)]
    leaked = [g.qid for g in guards if not g.answerable and passes(g, pipeline_floors)]
    return {"positives": sum(g.answerable for g in guards), "negatives": sum(not g.answerable for g in guards),
            "lost": lost, "leaked": leaked}


def sweep(features: list[GateFeatures], guards: list[GateFeatures], grid: dict | None = None) -> list[dict]:
    """Every floor combination of ``grid``: false-empty, correct-empty per class, guard errors."""
    grid = grid or GRID
    every = features + guards
    cols = {name: _col(every, attr) for name, attr in zip(FLOOR_NAMES, ("cosine", "cosine", "lexical", "entity_cosine", "entity_rest"))}
    unknown = np.array([f.unknown_name for f in every], dtype=bool)
    cols["cosine_floor"] = np.where(unknown, -np.inf, cols["cosine_floor"])  # each query uses one of the two cosine floors
    cols["cosine_floor_unknown_name"] = np.where(unknown, cols["cosine_floor_unknown_name"], -np.inf)
    n = len(features)
    kinds = np.array([f.kind for f in every])
    answerable = kinds == "answerable"
    is_feat = np.arange(len(every)) < n
    masks = {"answerable": answerable & is_feat, "off_topic": (kinds == "off_topic") & is_feat,
             "named": (kinds == "named") & is_feat}
    guard_pos, guard_neg = answerable & ~is_feat, ~answerable & ~is_feat
    per_floor = {name: [cols[name] >= v for v in grid[name]] for name in FLOOR_NAMES}
    counts = {k: int(m.sum()) for k, m in masks.items()}
    points = []
    sizes = [range(len(grid[name])) for name in FLOOR_NAMES]
    for i, u, j in itertools.product(*sizes[:3]):
        base = per_floor["cosine_floor"][i] | per_floor["cosine_floor_unknown_name"][u] | per_floor["lexical_floor"][j]
        for a, b in itertools.product(*sizes[3:]):
            passed = base | per_floor["entity_support_cosine"][a] | per_floor["entity_support_lexical"][b]
            p = {name: grid[name][x] for name, x in zip(FLOOR_NAMES, (i, u, j, a, b))}
            p["false_empty"] = 1 - (passed & masks["answerable"]).sum() / counts["answerable"] if counts["answerable"] else math.nan
            ce = []
            for kind in ("off_topic", "named"):
                value = 1 - (passed & masks[kind]).sum() / counts[kind] if counts[kind] else math.nan
                p[f"correct_empty_{kind}"] = value
                if counts[kind]:
                    ce.append(value)
            p["correct_empty"] = sum(ce) / len(ce) if ce else math.nan
            p["guard_errors"] = int((~passed & guard_pos).sum() + (passed & guard_neg).sum())
            points.append(p)
    return points


def sweep_rest(features: list[GateFeatures], guards: list[GateFeatures], floors: dict, grid: dict | None = None) -> list[dict]:
    """Every setting of the known-name rule on top of ``floors`` (the first sweep's pick)."""
    grid = grid or REST_GRID
    points = []
    for c, lex in itertools.product(grid["name_rest_cosine"], grid["name_rest_lexical"]):
        if c <= -1.0 and lex != grid["name_rest_lexical"][-1]:
            continue  # the rule off: one point
        full = {**floors, "name_rest_cosine": c, "name_rest_lexical": lex}
        p = outcome(features, full)
        errs = guard_errors(guards, full)
        p["guard_errors"] = len(errs["lost"]) + len(errs["leaked"])
        points.append(p)
    return points


def recommend_rest(points: list[dict], max_false_empty: float) -> dict:
    """The known-name rule's pick: fewest guard errors, false-empty within bounds, then the highest
    correct-empty on named off-topic questions; ties to the lower false-empty, the rule off, then lower floors."""
    fewest = min(p["guard_errors"] for p in points)
    guarded = [p for p in points if p["guard_errors"] == fewest]
    eligible = [p for p in guarded if p["false_empty"] <= max_false_empty] or guarded

    def key(p: dict) -> tuple:
        return (-round(p["correct_empty"], 9), round(p["false_empty"], 9), p["name_rest_cosine"], -p["name_rest_lexical"])

    return min(eligible, key=key)


def recommend(points: list[dict], max_false_empty: float) -> dict:
    """The admissible point with the highest correct-empty (see the module docstring)."""
    fewest = min(p["guard_errors"] for p in points)
    guarded = [p for p in points if p["guard_errors"] == fewest]
    eligible = [p for p in guarded if p["false_empty"] <= max_false_empty] or guarded

    def key(p: dict) -> tuple:
        return (-round(p["correct_empty"], 9), round(p["false_empty"], 9), *(p[name] for name in FLOOR_NAMES))

    best = min(eligible, key=key)
    return {**best, "met_false_empty_target": best["false_empty"] <= max_false_empty, "max_false_empty": max_false_empty}


def sweep_model_floor(features: list[GateFeatures], guards: list[GateFeatures], floors: dict, weights: list[float]) -> list[dict]:
    """Every model floor of :data:`MODEL_FLOOR_GRID` on top of ``floors`` (the five floors' pick)."""
    points = []
    for value in MODEL_FLOOR_GRID:
        full = {**floors, "name_model_floor": value, "name_model_weights": weights}
        p = outcome(features, full)
        errs = guard_errors(guards, full)
        p["guard_errors"] = len(errs["lost"]) + len(errs["leaked"])
        points.append(p)
    return points


def recommend_model_floor(points: list[dict], max_false_empty: float) -> dict:
    """Fewest guard errors, false-empty within bounds, then the highest correct-empty; ties to the
    lower false-empty and then the lower floor."""
    fewest = min(p["guard_errors"] for p in points)
    guarded = [p for p in points if p["guard_errors"] == fewest]
    eligible = [p for p in guarded if p["false_empty"] <= max_false_empty] or guarded
    return min(eligible, key=lambda p: (-round(p["correct_empty"], 9), round(p["false_empty"], 9), p["name_model_floor"]))


def separation(features: list[GateFeatures]) -> dict:
    """AUC of each best signal for telling answerable from unanswerable queries (missing = lowest)."""
    pos = [f for f in features if f.answerable]
    neg = [f for f in features if not f.answerable]

    def values(items, attr):
        return [getattr(f, attr) if getattr(f, attr) is not None else -1e9 for f in items]

    return {"cosine_auc": auc(values(pos, "cosine"), values(neg, "cosine")),
            "lexical_auc": auc(values(pos, "lexical"), values(neg, "lexical")),
            "entity_rate_answerable": sum(f.entity_cosine is not None for f in pos) / len(pos) if pos else math.nan,
            "entity_rate_negative": sum(f.entity_cosine is not None for f in neg) / len(neg) if neg else math.nan,
            "answerable": len(pos), "negative": len(neg)}


def fold_of(f: GateFeatures, folds: list[set[str]]) -> int:
    """Which half a LoCoMo query belongs to: the conversation (user) whose store it was asked of."""
    owner = f.qid.split("<-")[0] if "<-" in f.qid else f.qid.split("#")[0]
    return 0 if owner in folds[0] else 1


def calibrate(features: list[GateFeatures], folds: list[set[str]], *, guards: list[GateFeatures] | None = None,
              max_false_empty: float = 0.02, grid: dict | None = None) -> dict:
    """The whole procedure: a pick per fold (trained on one half, reported on the other)."""
    guards = guards or []
    report = {"separation": separation(features), "guard_samples": len(guards), "folds": [], "max_false_empty": max_false_empty}
    for k in (0, 1):
        train = [f for f in features if fold_of(f, folds) == k]
        test = [f for f in features if fold_of(f, folds) != k]
        if not train:
            continue
        pick = recommend(sweep(train, guards, grid), max_false_empty)
        floors = {name: pick[name] for name in FLOOR_NAMES}
        pick = recommend_rest(sweep_rest(train, guards, floors), max_false_empty) | {
            "met_false_empty_target": pick["met_false_empty_target"], "max_false_empty": max_false_empty}
        rule = {name: pick[name] for name in FLOOR_NAMES + REST_NAMES}
        # Step 5c: the known-name model replaces the two-floor rule (which stays in the report).
        weights = name_model_fit.fit(train)
        model = recommend_model_floor(sweep_model_floor(train, guards, {**rule, **REST_OFF}, weights), max_false_empty)
        floors = {**rule, "name_model_floor": model["name_model_floor"], "name_model_weights": weights}
        pick = model | {"met_false_empty_target": pick["met_false_empty_target"], "max_false_empty": max_false_empty,
                        "rule": {"floors": rule, "train": outcome(train, rule), "held_out": outcome(test, rule) if test else None}}
        report["folds"].append({"train": sorted(folds[k]), "floors": floors, "train_outcome": pick,
                                "held_out": outcome(test, floors) if test else None, "guards": guard_errors(guards, floors)})
    report["recommended"] = report["folds"][0]["floors"] if report["folds"] else None
    return report


def features_from_gate(qid: str, answerable: bool, outputs: dict, source: str) -> GateFeatures:
    """A labelled sample from a gate stage's logged outputs (names judged by the short-list rule are not
    the known-name model's, which is fitted on ``known_name`` only: that rule has no constant to calibrate,
    but :func:`passes` applies it, as the pipeline does)."""
    return GateFeatures(qid, answerable, outputs.get("best_cosine"), outputs.get("best_lexical"),
                        outputs.get("best_entity_cosine"), outputs.get("best_entity_rest_lexical"), source,
                        bool(outputs.get("unknown_names")), bool(outputs.get("known_names")) and not outputs.get("known_names_short"),
                        outputs.get("best_rest_cosine"), outputs.get("best_rest_lexical"), outputs.get("best_rest_both"),
                        bool(outputs.get("unheld_names")), rest_cover=outputs.get("best_rest_cover"),
                        rest_cover_joint=outputs.get("best_rest_cover_joint"), rest_held=outputs.get("rest_held"),
                        short_list=bool(outputs.get("known_names")) and bool(outputs.get("known_names_short")))
