"""Gate-floor calibration: sweep the cosine and BM25 floors over a labelled query set.

Each labelled query carries what the search log says about its best candidates — top dense
cosine, top BM25, whether any candidate was an exact entity match — and a label: answerable
(its answer is in the store) or off-topic (the right answer is empty). The gate lets a search
through when the best candidate clears the cosine floor, or the BM25 floor, or is an entity
match; so for any pair of floors the gate's decision on every logged query can be recomputed
without searching again. "Positive" means the gate let results through; F1 is taken over that.

The recommended floors come from the joint sweep without entity matches: the best-F1 pair whose
false-empty rate on answerable queries stays within the target and which still answers every
"guard" query (the scenario suite's short personal-fact searches) correctly; each floor is also
reported as a one-dimensional band (every value whose F1 is within 90% of that sweep's best).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .metrics import Confusion, auc, band, confusion

DISABLED = math.inf


@dataclass(frozen=True)
class GateFeatures:
    """What the gate sees for one labelled query (the best candidate of each generator)."""

    qid: str
    answerable: bool
    cosine: float | None
    bm25: float | None
    entity: bool


def passes(f: GateFeatures, cosine_floor: float, bm25_floor: float, use_entity: bool = True) -> bool:
    """The gate's decision with the given floors (``math.inf`` disables a signal)."""
    if use_entity and f.entity:
        return True
    if f.cosine is not None and f.cosine >= cosine_floor:
        return True
    return f.bm25 is not None and f.bm25 >= bm25_floor


def frange(start: float, stop: float, step: float) -> list[float]:
    """Inclusive float range rounded to the step's precision."""
    digits = max(0, -int(math.floor(math.log10(step)))) + 1
    count = int(round((stop - start) / step))
    return [round(start + i * step, digits) for i in range(count + 1)]


def sweep(features: list[GateFeatures], cosine_floors: list[float], bm25_floors: list[float], use_entity: bool = True) -> list[dict]:
    """Confusion counts and rates for every (cosine floor, BM25 floor) pair (cosine-major order)."""
    cos = np.array([f.cosine if f.cosine is not None else -np.inf for f in features], dtype=np.float64)
    bm = np.array([f.bm25 if f.bm25 is not None else -np.inf for f in features], dtype=np.float64)
    ent = np.array([use_entity and f.entity for f in features], dtype=bool)
    label = np.array([f.answerable for f in features], dtype=bool)
    cos_pass = cos[None, :] >= np.array(cosine_floors, dtype=np.float64)[:, None]  # (C, N)
    bm_pass = bm[None, :] >= np.array(bm25_floors, dtype=np.float64)[:, None]  # (B, N)
    points = []
    for i, cf in enumerate(cosine_floors):
        passed = cos_pass[i][None, :] | bm_pass | ent[None, :]  # (B, N)
        tp = (passed & label).sum(axis=1)
        fp = (passed & ~label).sum(axis=1)
        fn = (~passed & label).sum(axis=1)
        tn = (~passed & ~label).sum(axis=1)
        for j, bf in enumerate(bm25_floors):
            c = Confusion(int(tp[j]), int(fp[j]), int(tn[j]), int(fn[j]))
            points.append({"cosine_floor": cf, "bm25_floor": bf, **c.to_dict()})
    return points


def one_dimensional(features: list[GateFeatures], signal: str, values: list[float], share: float = 0.9) -> dict:
    """Sweep one floor with the other signals switched off; F1 per value and the 90%-of-best band."""
    if signal == "cosine":
        points = sweep(features, values, [DISABLED], use_entity=False)
    elif signal == "bm25":
        points = sweep(features, [DISABLED], values, use_entity=False)
    else:
        raise ValueError("signal must be 'cosine' or 'bm25'")
    key = "cosine_floor" if signal == "cosine" else "bm25_floor"
    scores = [p["f1"] for p in points]
    best = max(range(len(points)), key=lambda i: (scores[i], -abs(i - len(points) / 2)))
    low_high = band([p[key] for p in points], scores, share)
    return {"signal": signal, "points": [{"value": p[key], **{k: p[k] for k in ("f1", "precision", "recall", "correct_empty", "false_empty")}} for p in points],
            "best_value": points[best][key], "best_f1": scores[best], "band": list(low_high) if low_high else None, "band_share": share}


def recommend(points: list[dict], max_false_empty: float = 0.05) -> dict:
    """The joint-sweep point to adopt: best F1 among points meeting the false-empty target (falls
    back to best F1 overall). Ties go to higher correct-empty, then lower false-empty, then the
    lowest floors: where the labelled set cannot tell two floors apart, the lower one keeps more of
    what it does not cover (an exact identifier found only by BM25, say)."""
    finite = [p for p in points if math.isfinite(p["cosine_floor"]) and math.isfinite(p["bm25_floor"])]
    eligible = [p for p in finite if p["false_empty"] <= max_false_empty] or finite

    def key(p: dict) -> tuple:
        return (round(p["f1"], 9), round(p["correct_empty"], 9), -round(p["false_empty"], 9))

    best = max(key(p) for p in eligible)
    chosen = min((p for p in eligible if key(p) == best), key=lambda p: (p["cosine_floor"], p["bm25_floor"]))
    return {**chosen, "met_false_empty_target": chosen["false_empty"] <= max_false_empty, "max_false_empty": max_false_empty}


def joint_band(points: list[dict], share: float = 0.9) -> dict:
    """Per floor, the range of values appearing in any joint point within ``share`` of the best F1."""
    best = max(p["f1"] for p in points)
    inside = [p for p in points if p["f1"] >= share * best and math.isfinite(p["cosine_floor"]) and math.isfinite(p["bm25_floor"])]
    if not inside:
        return {"best_f1": best, "cosine": None, "bm25": None}
    return {"best_f1": best, "cosine": [min(p["cosine_floor"] for p in inside), max(p["cosine_floor"] for p in inside)],
            "bm25": [min(p["bm25_floor"] for p in inside), max(p["bm25_floor"] for p in inside)]}


def separation(features: list[GateFeatures]) -> dict:
    """AUC of each raw signal for telling answerable from off-topic queries (missing = lowest)."""
    pos = [f for f in features if f.answerable]
    neg = [f for f in features if not f.answerable]

    def values(items: list[GateFeatures], attr: str) -> list[float]:
        return [getattr(f, attr) if getattr(f, attr) is not None else -1e9 for f in items]

    return {"cosine_auc": auc(values(pos, "cosine"), values(neg, "cosine")),
            "bm25_auc": auc(values(pos, "bm25"), values(neg, "bm25")),
            "entity_rate_answerable": sum(f.entity for f in pos) / len(pos) if pos else float("nan"),
            "entity_rate_off_topic": sum(f.entity for f in neg) / len(neg) if neg else float("nan"),
            "answerable": len(pos), "off_topic": len(neg)}


def guard_errors(guards: list[GateFeatures], cosine_floor: float, bm25_floor: float) -> dict:
    """How the floors treat the guard set (the scenario suite's searches): positives the gate would
    empty and negatives it would let through, with entity matches counted as the pipeline does."""
    lost = [g.qid for g in guards if g.answerable and not passes(g, cosine_floor, bm25_floor)]
    leaked = [g.qid for g in guards if not g.answerable and passes(g, cosine_floor, bm25_floor)]
    return {"positives": sum(g.answerable for g in guards), "negatives": sum(not g.answerable for g in guards),
            "lost": lost, "leaked": leaked}


def calibrate(features: list[GateFeatures], *, guards: list[GateFeatures] | None = None, cosine_floors: list[float] | None = None,
              bm25_floors: list[float] | None = None, max_false_empty: float = 0.05, share: float = 0.9) -> dict:
    """The whole calibration report: separation, 1-D sweeps with bands, joint sweeps and the pick.

    The joint sweep ignores entity matches: the floors must carry the decision on their own,
    because a real query often names no entity the store knows. The pick (``recommended``) is the
    best-F1 pair on ``features`` with false-empty within ``max_false_empty`` that also classifies
    every ``guards`` sample correctly (short personal-fact queries from the scenario suite, which
    a floor tuned on LoCoMo alone can cut off); ``recommended_unguarded`` ignores the guards.
    """
    cosine_floors = cosine_floors or frange(0.0, 0.9, 0.01)
    bm25_floors = bm25_floors or frange(0.0, 30.0, 0.5)
    guards = guards or []
    joint = sweep(features, cosine_floors, bm25_floors, use_entity=False)
    joint_entity = sweep(features, cosine_floors, bm25_floors, use_entity=True)
    unguarded = recommend(joint, max_false_empty)
    safe = [p for p in joint if not (lambda e: e["lost"] or e["leaked"])(guard_errors(guards, p["cosine_floor"], p["bm25_floor"]))]
    pick = recommend(safe, max_false_empty) if safe else unguarded
    pick = {**pick, "guards_respected": bool(safe)}

    def outcome_with_entity(point: dict) -> dict:
        return next(p for p in joint_entity if p["cosine_floor"] == point["cosine_floor"] and p["bm25_floor"] == point["bm25_floor"])

    return {
        "separation": separation(features),
        "cosine": one_dimensional(features, "cosine", cosine_floors, share),
        "bm25": one_dimensional(features, "bm25", bm25_floors, share),
        "joint_band": joint_band(joint, share),
        "joint_band_with_entity": joint_band(joint_entity, share),
        "recommended": pick,
        "recommended_outcome_with_entity": outcome_with_entity(pick),
        "recommended_guards": guard_errors(guards, pick["cosine_floor"], pick["bm25_floor"]),
        "recommended_unguarded": unguarded,
        "unguarded_outcome_with_entity": outcome_with_entity(unguarded),
        "unguarded_guards": guard_errors(guards, unguarded["cosine_floor"], unguarded["bm25_floor"]),
        "recommended_with_entity": recommend(joint_entity, max_false_empty),
        "guard_samples": len(guards),
        "grid": {"cosine_floors": cosine_floors, "bm25_floors": bm25_floors,
                 "f1": [[p["f1"] for p in joint[i * len(bm25_floors):(i + 1) * len(bm25_floors)]] for i in range(len(cosine_floors))]},
    }


def tradeoff(features: list[GateFeatures], guards: list[GateFeatures], cosine_floors: list[float], bm25_floor: float) -> list[dict]:
    """One row per cosine floor at a fixed BM25 floor: the LoCoMo outcome and the guard errors."""
    rows = []
    for cf in cosine_floors:
        plain = evaluate_floors(features, cf, bm25_floor, use_entity=False)
        entity = evaluate_floors(features, cf, bm25_floor, use_entity=True)
        errors = guard_errors(guards, cf, bm25_floor)
        rows.append({"cosine_floor": cf, "bm25_floor": bm25_floor, "f1": plain["f1"], "correct_empty": plain["correct_empty"],
                     "false_empty": plain["false_empty"], "false_empty_with_entity": entity["false_empty"],
                     "guard_positives_lost": len(errors["lost"]), "guard_negatives_leaked": len(errors["leaked"])})
    return rows


def evaluate_floors(features: list[GateFeatures], cosine_floor: float, bm25_floor: float, use_entity: bool = True) -> dict:
    """Gate outcome on a (held-out) set with fixed floors."""
    c = confusion([passes(f, cosine_floor, bm25_floor, use_entity) for f in features], [f.answerable for f in features])
    return {"cosine_floor": cosine_floor, "bm25_floor": bm25_floor, "use_entity": use_entity, **c.to_dict()}
