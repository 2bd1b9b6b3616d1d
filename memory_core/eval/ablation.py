"""Offline ablations: replay fusion, freshness and the gate over one pass's logged candidate lists.

A pass run with the gate open (every result set passes) and freshness off logs, per question, the
dense, lexical and entity lists and every candidate's gate signals. The pipeline's own pure
functions (:func:`~memory_core.retrieve.fuse.rrf_fuse`, :func:`freshness_factor`, the
set-level gate decision, :func:`memory_core.retrieve.gate.passes`) then give the ranking any other setting of those stages would have
returned, without searching again, so each change can be measured alone, in order, and on
either half of the conversations. Duplicate collapse and the token budget are not replayed (on
LoCoMo's short turns they changed nothing in any measured pass); the full passes measure them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from ..clock import parse_ts
from ..retrieve.freshness import asks_about_recency, freshness_factor
from ..retrieve.fuse import rrf_fuse
from ..store import harness_queries
from .metrics import hit_at_k, mean, recall_at_k


@dataclass(frozen=True)
class Replay:
    """The stage settings one replay applies (the retrieval settings of the same names)."""

    lists: tuple[str, ...] = ("dense", "lexical", "entity")
    rrf_k: float = 60.0
    entity_when_full: bool = True  # False: a full entity list stays out of the fusion (the pipeline's rule)
    freshness_weight: float = 0.0
    freshness_half_life_days: float = 90.0
    freshness_scope: str = "always"
    gate: dict | None = None  # the five gate floors by setting name (gate_calibration.FLOOR_NAMES)
    result_floor: float | None = None  # with a gate: drop candidates below it on cosine and lexical score
    name_stripped: bool = False  # fuse the pool ordered by cosine to the name-stripped question (when the entity list is full)
    k_per_generator: int = 30

    def with_(self, **changes) -> "Replay":
        return replace(self, **changes)


@dataclass
class LoggedQuestion:
    """What the open pass logged for one question (answerable or off-topic)."""

    qid: str
    query: str
    answerable: bool
    category: int | None
    evidence: tuple[str, ...]
    now: datetime
    lists: dict[str, list[str]]
    signals: dict[str, float | None]  # best cosine, lexical, entity cosine, entity rest lexical
    event_at: dict[str, str]  # record id -> event time (else creation time)
    candidates: dict[str, dict] = field(default_factory=dict)  # record id -> the gate's per-candidate signals
    seq: dict[str, int] = field(default_factory=dict)  # record id -> store sequence number (the pipeline's tie-break)
    doubted: bool = False  # a named off-topic question whose label the dataset check doubts (named_labels)


def gate_passes(signals: dict, floors: dict) -> bool:
    """The set-level gate from the best signals (equivalent to the pipeline's per-candidate check)."""
    from .gate_calibration import GateFeatures, passes

    return passes(GateFeatures("", True, signals.get("cosine"), signals.get("lexical"), signals.get("entity_cosine"),
                               signals.get("entity_rest"), unknown_name=bool(signals.get("unknown_name")),
                               known_name=bool(signals.get("known_name")), rest_cosine=signals.get("rest_cosine"),
                               rest_lexical=signals.get("rest_lexical"), rest_both=signals.get("rest_both"),
                               unheld_name=bool(signals.get("unheld_name")), rest_cover=signals.get("rest_cover"),
                               rest_cover_joint=signals.get("rest_cover_joint"), rest_held=signals.get("rest_held")), floors)


def replay(q: LoggedQuestion, r: Replay, limit: int = 10) -> list[str]:
    """The ids the pipeline would return for ``q`` under ``r`` (before collapse and budget)."""
    if r.gate is not None and not gate_passes(q.signals, r.gate):
        return []
    lists = {name: q.lists.get(name, []) for name in r.lists}
    if "entity" in lists and not r.entity_when_full and len(lists["entity"]) >= r.k_per_generator:
        del lists["entity"]
        rest = {i: c["rest_cosine"] for i, c in q.candidates.items() if c.get("rest_cosine") is not None}
        if r.name_stripped and rest:  # the pipeline's generate.name_stripped.rest_list, from the logged cosines
            lists["name_stripped"] = sorted(rest, key=lambda i: (-rest[i], q.seq.get(i, 0)))[:r.k_per_generator]
    # fuse sequence numbers, as the pipeline does, so ties break the same way (ids are random)
    ids = {q.seq.get(i, -1 - n): i for n, i in enumerate(i for items in lists.values() for i in items)}
    by_id = {i: seq for seq, i in ids.items()}
    fused = [(ids[seq], score) for seq, score in rrf_fuse({n: [by_id[i] for i in items] for n, items in lists.items()}, r.rrf_k)]
    scores = {item: score for item, score in fused}
    order = [item for item, _ in fused]
    if r.freshness_weight > 0 and (r.freshness_scope == "always" or asks_about_recency(q.query)):
        rank = {item: i for i, item in enumerate(order)}
        for item in order:
            when = q.event_at.get(item)
            if when:
                age = (q.now - parse_ts(when)).total_seconds() / 86400.0
                scores[item] *= freshness_factor(age, r.freshness_half_life_days, r.freshness_weight)
        order.sort(key=lambda item: (-scores[item], rank[item]))
    if r.gate is not None and r.result_floor is not None:
        order = [item for item in order if _keeps(q.candidates.get(item, {}), r.result_floor, r.gate, q.signals)]
    return order[:limit]


def _keeps(c: dict, floor: float, floors: dict, signals: dict) -> bool:
    """The gate's per-candidate keep rule in a result set that passed: above the result floor on
    cosine or lexical score, or strong evidence itself under ``floors`` (the open pass's own
    "strong" flags were judged with the gate open, so they are recomputed here)."""
    from ..retrieve.gate import Evidence, GateFloors, candidate_strong

    def at_least(value, limit):
        return value is not None and value >= limit

    if at_least(c.get("cosine"), floor) or at_least(c.get("lexical"), floor):
        return True
    gate_floors = GateFloors(floors["cosine_floor"], floors["lexical_floor"], floors["entity_support_cosine"],
                             floors["entity_support_lexical"], floors["cosine_floor_unknown_name"])
    evidence = Evidence(c.get("cosine"), c.get("lexical"), ("entity",) if c.get("entity") else (), c.get("rest_lexical"),
                        ("name",) if signals.get("unknown_name") else ())
    return candidate_strong(evidence, gate_floors)


def score_replay(questions: list[LoggedQuestion], r: Replay, covers: dict[str, dict[str, list[str]]]) -> dict:
    """recall@5/@10 and hit@10 overall and per category, correct-empty per off-topic class."""
    per_cat: dict[str, list[dict]] = {}
    negatives: dict[str, list[bool]] = {}
    for q in questions:
        ranking = replay(q, r)
        if q.answerable:
            cov = covers[q.qid.split("#")[0]]
            m = {"recall@5": recall_at_k(ranking, q.evidence, cov, 5), "recall@10": recall_at_k(ranking, q.evidence, cov, 10),
                 "hit@10": hit_at_k(ranking, q.evidence, cov, 10), "empty": float(not ranking)}
            per_cat.setdefault("overall", []).append(m)
            per_cat.setdefault(str(q.category), []).append(m)
        else:
            kind = "named" if q.qid.endswith("~named") else "off_topic"
            negatives.setdefault(kind, []).append(not ranking)
            if kind == "named" and not q.doubted:
                negatives.setdefault("named_verified", []).append(not ranking)
    out = {cat: {k: mean(m[k] for m in items) for k in ("recall@5", "recall@10", "hit@10", "empty")} | {"questions": len(items)}
           for cat, items in per_cat.items()}
    out["correct_empty"] = {kind: mean(v) for kind, v in negatives.items()}
    return out


def logged_questions(store, conversations, run: dict) -> list[LoggedQuestion]:
    """The open pass's searches (from :func:`.locomo_run.ask_all`) as replayable questions."""
    from datetime import timedelta

    from .ingest import user_id_for

    now = {user_id_for(c): c.last_at + timedelta(days=1) for c in conversations}
    by_conv = {c.sample_id: user_id_for(c) for c in conversations}
    items: list[tuple] = [(o.question, o.observation, by_conv[o.question.conversation], True) for o in run["outcomes"]]
    for kind in ("off_topic", "named_off_topic"):
        for q, obs in run.get(kind, []):
            items.append((q, obs, None, False))
    ids = {i for _, obs, _, _ in items for name in ("dense", "lexical", "entity") for i in obs.rankings[name]}
    event_at, seq_of = harness_queries.event_times(store.service.store, list(ids))
    out = []
    for q, obs, user, answerable in items:
        if user is None:  # off-topic: asked of the store whose search id's log row names the user
            user = harness_queries.search_user(store.service.store, obs.search_id)
        signals = {"cosine": obs.best_cosine, "lexical": obs.best_lexical, "entity_cosine": obs.best_entity_cosine,
                   "entity_rest": obs.best_entity_rest_lexical, "unknown_name": bool(obs.unknown_names),
                   "known_name": bool(obs.known_names), "rest_cosine": obs.best_rest_cosine, "rest_lexical": obs.best_rest_lexical,
                   "rest_both": obs.best_rest_both, "unheld_name": bool(obs.unheld_names), "rest_cover": obs.best_rest_cover,
                   "rest_cover_joint": obs.best_rest_cover_joint, "rest_held": obs.rest_held}
        lists = {name: list(obs.rankings[name]) for name in ("dense", "lexical", "entity")}
        qid = q.qid if answerable else f"{user}<-{q.qid}"
        out.append(LoggedQuestion(qid, q.text, answerable, q.category if answerable else None, q.evidence if answerable else (),
                                  now[user], lists, signals, {i: event_at[i] for name in lists for i in lists[name] if i in event_at},
                                  {c["id"]: c for c in obs.gate_candidates},
                                  {i: seq_of[i] for name in lists for i in lists[name] if i in seq_of}, bool(getattr(q, "doubts", ()))))
    return out


PREVIOUS_FRESHNESS_WEIGHT = 0.5  # the default before freshness was measured (and turned off)
# the first known-name model (issue 13): six signals, fitted on half A, before the word-level signals
FIRST_NAME_MODEL = {"name_model_floor": 0.105, "name_model_weights": [-9.469371, 0.0, 0.007234, 7.767924, 7.111005, 0.00733, 1.309444]}


def ladder(settings) -> list[tuple[str, Replay]]:
    """The ablation rows: single generators, then one change at a time up to the shipped pipeline."""
    from .gate_calibration import ALL_FLOORS, FLOOR_NAMES, REST_NAMES

    s = settings
    base = Replay(k_per_generator=s.candidates_per_generator)
    fused_before = base.with_(rrf_k=s.rrf_k, entity_when_full=False)
    fused = fused_before.with_(name_stripped=s.rest_list_in_fusion)
    fresh = dict(freshness_weight=PREVIOUS_FRESHNESS_WEIGHT, freshness_half_life_days=s.freshness_half_life_days)
    shipped = fused.with_(freshness_weight=s.freshness_weight, freshness_half_life_days=s.freshness_half_life_days,
                          freshness_scope=s.freshness_scope)
    w, hl = PREVIOUS_FRESHNESS_WEIGHT, s.freshness_half_life_days
    floors = {n: getattr(s, n) for n in FLOOR_NAMES}
    rule = {n: getattr(s, n) for n in FLOOR_NAMES + REST_NAMES}
    return [
        ("dense only", base.with_(lists=("dense",))),
        ("lexical only (readable-statistics score)", base.with_(lists=("lexical",))),
        ("entity only (most recent first)", base.with_(lists=("entity",))),
        ("plain RRF of dense + lexical, k 60", base.with_(lists=("dense", "lexical"))),
        ("RRF of all three lists, k 60 (previous fusion)", base),
        (f"… with k {s.rrf_k:g}", base.with_(rrf_k=s.rrf_k)),
        ("… and a full entity list left out of the fusion", fused_before),
        (f"… + the name-stripped list in the fusion ({'on' if s.rest_list_in_fusion else 'off, as shipped'})",
         fused_before.with_(name_stripped=True)),
        (f"… + freshness on every query (weight {w:g}, half-life {hl:g} d: the previous default)", fused.with_(**fresh)),
        (f"… freshness (weight {w:g}) only for recency questions", fused.with_(**fresh, freshness_scope="recency_questions")),
        (f"… freshness as shipped (weight {s.freshness_weight:g}, {s.freshness_scope})", shipped),
        ("… + the gate at the shipped floors, judged on the set", shipped.with_(gate=floors)),
        (f"… + result floor {s.result_floor:g}", shipped.with_(gate=floors, result_floor=s.result_floor)),
        (f"… + the known-name rule as two floors (name-stripped cosine {s.name_rest_cosine:g} or other-words lexical "
         f"{s.name_rest_lexical:g})", shipped.with_(gate=rule, result_floor=s.result_floor)),
        ("… the first known-name model instead (six signals, floor 0.105)",
         shipped.with_(gate={n: getattr(s, n) for n in ALL_FLOORS} | FIRST_NAME_MODEL, result_floor=s.result_floor)),
        (f"… the known-name model with the word-level signals (floor {s.name_model_floor:g}; shipped, replayed without the "
         "short-list rule)", shipped.with_(gate={n: getattr(s, n) for n in ALL_FLOORS}, result_floor=s.result_floor)),
    ]


def fold_of_question(q: LoggedQuestion, folds: list[set[str]]) -> int:
    """Which half a question belongs to: the conversation whose store it was asked of."""
    owner = q.qid.split("<-")[0] if "<-" in q.qid else q.qid.split("#")[0]
    return 0 if owner in folds[0] else 1


def choose_rrf_k(questions: list[LoggedQuestion], covers, folds, ks=(1, 2, 3, 5, 10, 20, 60), k_per_generator: int = 30,
                 name_stripped: bool = True) -> list[dict]:
    """Per fold: recall@10 of each RRF k on the training half (entity list out when full, the
    name-stripped list in as shipped, no freshness, no gate), the best k there (at three decimals;
    ties to the larger k), and that k's recall on the held-out half."""
    out = []
    for fold in (0, 1):
        train = [q for q in questions if fold_of_question(q, folds) == fold]
        test = [q for q in questions if fold_of_question(q, folds) != fold]
        if not train or not test:
            continue
        scores = {k: score_replay(train, Replay(rrf_k=k, entity_when_full=False, k_per_generator=k_per_generator,
                                                name_stripped=name_stripped), covers)
                  ["overall"]["recall@10"] for k in ks}
        # recall@10 is flat near its best (differences in the fourth decimal are tie order, not signal):
        # compare at three decimals and let ties go to the larger k, the more conservative fusion
        best = max(ks, key=lambda k: (round(scores[k], 3), k))
        held = score_replay(test, Replay(rrf_k=best, entity_when_full=False, k_per_generator=k_per_generator,
                                         name_stripped=name_stripped), covers)
        out.append({"train": sorted(folds[fold]), "train_recall": scores, "best_k": best, "held_out_recall@10": held["overall"]["recall@10"]})
    return out
