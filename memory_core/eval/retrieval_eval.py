"""LoCoMo retrieval evaluation: run questions as searches, read each search's log row, score
every pipeline stage's ranking (the ablations), and aggregate per question category.

One search per question yields all the ablations, because the search log records each stage's
output: the dense, lexical and entity candidate lists, the fused order before and after the
freshness adjustment, the gate's survivors, the collapsed list and the final results. Nothing is
re-ranked here; the harness only reads what the pipeline logged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..retrieve.fuse import rrf_fuse
from ..store.search_log_queries import search_row
from .gate_calibration import GateFeatures
from .locomo import CATEGORY_NAMES, Question
from .metrics import hit_at_k, mean, recall_at_k
from .search_log_reader import SearchLogEntry

# Views of one search: the pipeline's stages in order ("full" is what the caller received), then
# one derived view computed from the same log row with the pipeline's own function: "dense_lexical"
# fuses only the logged dense and lexical lists (rrf_fuse, the logged rrf_k), plain RRF of the two
# retrievers, the baseline the pipeline must beat.
PIPELINE_VIEWS = ("dense", "lexical", "entity", "fused", "fused_fresh", "gated", "collapsed", "full")
DERIVED_VIEWS = ("dense_lexical",)
VIEWS = PIPELINE_VIEWS + DERIVED_VIEWS
VIEW_LABELS = {
    "dense": "dense only (cosine)",
    "lexical": "lexical only (readable-statistics lexical score)",
    "entity": "entity only (exact alias)",
    "fused": "fused (RRF)",
    "fused_fresh": "… + freshness",
    "gated": "… + gate (on the result set)",
    "collapsed": "… + duplicate collapse",
    "full": "full pipeline (as returned)",
    "dense_lexical": "derived: plain RRF of dense + lexical",
}
KS = (5, 10)


@dataclass
class SearchObservation:
    """What one logged search shows: a ranking per view, the gate's inputs, and timings."""

    search_id: str
    rankings: dict[str, list[str]]
    best_cosine: float | None
    best_lexical: float | None
    entity_matches: int
    empty_reason: str | None
    total_ms: float
    stages_ms: dict[str, float]
    best_entity_cosine: float | None = None
    best_entity_rest_lexical: float | None = None
    gate_candidates: list[dict] = field(default_factory=list, repr=False)
    unknown_names: list[str] = field(default_factory=list)
    known_names: list[str] = field(default_factory=list)
    best_rest_cosine: float | None = None
    best_rest_lexical: float | None = None
    best_rest_both: float | None = None
    unheld_names: list[str] = field(default_factory=list)
    user_id: str = ""  # whose memory was searched
    best_rest_cover: float | None = None
    best_rest_cover_joint: float | None = None
    rest_held: float | None = None

    @property
    def empty(self) -> bool:
        return not self.rankings["full"]

    @classmethod
    def from_log(cls, entry: SearchLogEntry, rrf_k: float = 60.0) -> "SearchObservation":
        stages = {s.get("name"): s for s in entry.trace.get("stages", [])}

        def out(name: str) -> dict:
            return (stages.get(name) or {}).get("outputs") or {}

        def ids(items: Iterable) -> list[str]:
            return [item["id"] if isinstance(item, dict) else item for item in items or []]

        rankings = {
            "dense": ids(out("dense").get("candidates")),
            "lexical": ids(out("lexical").get("candidates")),
            "entity": ids(out("entity").get("candidates")),
            "fused": ids(out("fusion").get("fused")),
        }
        rankings["dense_lexical"] = [item for item, _ in rrf_fuse({"dense": rankings["dense"], "lexical": rankings["lexical"]}, rrf_k)]
        fresh = stages.get("freshness") or {}
        rankings["fused_fresh"] = ids(out("freshness").get("order")) if fresh.get("status") == "ran" else list(rankings["fused"])
        gate = out("gate")
        passed = bool(gate.get("passed")) if "passed" in gate else bool(entry.result_ids)
        rankings["gated"] = list(rankings["fused_fresh"]) if passed else []
        collapse = stages.get("collapse") or {}
        rankings["collapsed"] = ids(out("collapse").get("kept")) if collapse.get("status") == "ran" else list(rankings["gated"])
        rankings["full"] = list(entry.result_ids)
        dense = out("dense").get("candidates") or []
        lexical = out("lexical").get("candidates") or []
        best_cosine = gate.get("best_cosine", dense[0].get("cosine") if dense else None)
        best_lexical = gate.get("best_lexical", lexical[0].get("lexical") if lexical else None)
        return cls(entry.id, rankings, best_cosine, best_lexical, int(gate.get("entity_matches") or len(rankings["entity"])),
                   entry.empty_reason, entry.total_ms, dict(entry.stages),
                   gate.get("best_entity_cosine"), gate.get("best_entity_rest_lexical"), list(gate.get("candidates") or []),
                   list(gate.get("unknown_names") or []), list(gate.get("known_names") or []),
                   gate.get("best_rest_cosine"), gate.get("best_rest_lexical"), gate.get("best_rest_both"),
                   list(gate.get("unheld_names") or []), "", gate.get("best_rest_cover"), gate.get("best_rest_cover_joint"),
                   gate.get("rest_held"))


def observe(service, search_id: str) -> SearchObservation:
    """Read a search's log row and turn it into an observation."""
    row = search_row(service.store, search_id)
    if row is None:
        raise KeyError(f"no search_log row {search_id}")
    from ..retrieve.search_log import decode_request

    rrf_k = (decode_request(service.store, row["request"]).get("settings") or {}).get("rrf_k", 60.0)
    obs = SearchObservation.from_log(SearchLogEntry.from_row(row), rrf_k)
    obs.user_id = row["user_id"]
    return obs


@dataclass
class QuestionOutcome:
    """One answerable question asked of its own conversation's store."""

    question: Question
    observation: SearchObservation
    scores: dict[str, dict[str, float]] = field(default_factory=dict)  # view -> metric -> value

    @classmethod
    def score(cls, question: Question, observation: SearchObservation, covers: dict[str, list[str]]) -> "QuestionOutcome":
        scores = {}
        for view, ranking in observation.rankings.items():
            metrics = {f"recall@{k}": recall_at_k(ranking, question.evidence, covers, k) for k in KS}
            metrics["hit@10"] = hit_at_k(ranking, question.evidence, covers, 10)
            scores[view] = metrics
        return cls(question, observation, scores)


def aggregate(outcomes: list[QuestionOutcome]) -> dict:
    """Mean of every metric per view, overall and per category, plus counts."""
    groups: dict[str, list[QuestionOutcome]] = defaultdict(list)
    for o in outcomes:
        groups["overall"].append(o)
        groups[f"{o.question.category}:{CATEGORY_NAMES[o.question.category]}"].append(o)
    table = {}
    for group, items in sorted(groups.items(), key=lambda kv: (kv[0] != "overall", kv[0])):
        table[group] = {"questions": len(items), **{
            view: {metric: mean(o.scores[view][metric] for o in items) for metric in ("recall@5", "recall@10", "hit@10")}
            for view in VIEWS}}
        table[group]["false_empty"] = mean(1.0 if o.observation.empty else 0.0 for o in items)
    return table


def gate_features(question_id: str, answerable: bool, observation: SearchObservation, doubted: bool = False) -> GateFeatures:
    """The calibration input for one labelled query (``doubted``: a named off-topic question whose
    label the dataset check doubts, :mod:`.named_labels`)."""
    return GateFeatures(question_id, answerable, observation.best_cosine, observation.best_lexical,
                        observation.best_entity_cosine, observation.best_entity_rest_lexical, "locomo", bool(observation.unknown_names),
                        bool(observation.known_names), observation.best_rest_cosine, observation.best_rest_lexical,
                        observation.best_rest_both, bool(observation.unheld_names), doubted, observation.best_rest_cover,
                        observation.best_rest_cover_joint, observation.rest_held)


def off_topic_summary(observations: list[SearchObservation]) -> dict:
    """How often the off-topic questions got the right answer (nothing)."""
    n = len(observations)
    returned = [len(o.rankings["full"]) for o in observations if not o.empty]
    return {"questions": n, "correct_empty": sum(o.empty for o in observations) / n if n else float("nan"),
            "mean_results_when_not_empty": mean(returned) if returned else 0.0}


def stage_latency(observations: list[SearchObservation]) -> dict[str, dict[str, float]]:
    """p50/p95/mean milliseconds per pipeline stage and in total."""
    import numpy as np

    names: list[str] = []
    for o in observations:
        for name in o.stages_ms:
            if name not in names:
                names.append(name)
    out = {}
    for name in [*names, "total"]:
        values = [o.total_ms if name == "total" else o.stages_ms.get(name, 0.0) for o in observations]
        if values:
            arr = np.array(values, dtype=float)
            out[name] = {"p50": float(np.percentile(arr, 50)), "p95": float(np.percentile(arr, 95)), "mean": float(arr.mean())}
    return out
