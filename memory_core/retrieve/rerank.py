"""The optional reranker: a cross-encoder scores (query, record) pairs of the surviving candidates.

Off by default. Two placements (``reranker_mode``): ``after_floors`` reorders what the gate let
through; ``replace_floors`` defers the gate's floors and keeps candidates whose reranker score
reaches ``reranker_min_score`` instead. Scoring runs on a worker thread under
``reranker_timeout_s``; on a timeout or error the fused order stands (and, in replace_floors
mode, the floors the gate deferred are applied after all). Loading the model happens on first use
and is not counted against the timeout.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path

from ..settings import RetrievalSettings
from .recorder import StageRecorder
from .request import SearchRequest
from .search_types import Candidate
from .services import SearchServices


class FlagRerankerScorer:
    """A FlagEmbedding ``FlagReranker`` (bge-reranker-v2-m3 by default) from a local directory."""

    def __init__(self, model_path: str | Path, *, max_length: int = 512, device: str = "cpu") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        path = Path(model_path)
        if not path.is_dir():
            raise FileNotFoundError(f"reranker model directory {path} does not exist")
        from ..extras import require_extra

        require_extra("bge", "the bge reranker")
        from FlagEmbedding import FlagReranker

        from ..embed.sentence import model_dir_version

        self._model = FlagReranker(str(path), use_fp16=False, devices=device, max_length=max_length)
        self._lock = threading.Lock()
        self.model_name = path.name
        self.model_version = model_dir_version(path)

    def score(self, query: str, passages: list[str]) -> list[float]:
        """Relevance of each passage to ``query`` in [0, 1] (sigmoid of the cross-encoder logit)."""
        if not passages:
            return []
        with self._lock:
            scores = self._model.compute_score([[query, p] for p in passages], normalize=True)
        if isinstance(scores, (int, float)):
            scores = [scores]
        return [float(s) for s in scores]


def build_reranker(model_path: str | None, max_length: int):
    """The configured cross-encoder; raises with a readable message when it cannot be loaded."""
    if not model_path:
        raise FileNotFoundError("retrieval.reranker_model_path is not set")
    return FlagRerankerScorer(model_path, max_length=max_length)


class RerankStage:
    """Optional (off by default): a cross-encoder reorders the survivors, or (replace_floors)
    decides instead of the gate's floors."""

    name = "rerank"

    @dataclass(slots=True)
    class Inputs:
        settings: RetrievalSettings
        request: SearchRequest
        query: str
        ranking: list[Candidate]
        floors_deferred: bool
        gate: dict

    @dataclass(slots=True)
    class Outputs:
        ranking: list[Candidate]
        rerank_outcome: dict  # status (disabled, reranked, unavailable, timeout, failed) and details
        empty_reason: str | None = None

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reranker")

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        s, ranking = given.settings, given.ranking
        enabled = s.reranker_enabled if given.request.rerank is None else given.request.rerank
        rec.io(inputs={"enabled": enabled, "mode": s.reranker_mode, "candidates": len(ranking), "timeout_s": s.reranker_timeout_s})
        if not enabled:
            rec.skip("reranking is disabled")
            return self.Outputs(ranking, {"status": "disabled"})
        outcome: dict = {"mode": s.reranker_mode, "candidates": len(ranking)}
        try:
            scorer = deps.reranker(s)
            outcome["model"] = getattr(scorer, "model_name", type(scorer).__name__)
        except Exception as exc:  # a missing model must not fail the search
            outcome.update(status="unavailable", detail=f"{type(exc).__name__}: {exc}")
            return self._fall_back(given, rec, outcome)
        future = self._executor.submit(scorer.score, given.query, [c.content or "" for c in ranking])
        try:
            scores = future.result(timeout=s.reranker_timeout_s)
        except FutureTimeout:
            outcome.update(status="timeout", detail=f"no scores within {s.reranker_timeout_s} s")
            return self._fall_back(given, rec, outcome)
        except Exception as exc:
            outcome.update(status="failed", detail=f"{type(exc).__name__}: {exc}")
            return self._fall_back(given, rec, outcome)
        if len(scores) != len(ranking):
            outcome.update(status="failed", detail=f"{len(scores)} scores for {len(ranking)} candidates")
            return self._fall_back(given, rec, outcome)
        for before, (cand, score) in enumerate(zip(ranking, scores), start=1):
            cand.rerank = {**(cand.rerank or {}), "score": round(float(score), 6), "rank_before": before}
        kept = []
        for cand in ranking:
            if given.floors_deferred and cand.rerank["score"] < s.reranker_min_score:
                rec.drop(cand, f"reranker score {cand.rerank['score']:.3f} < min {s.reranker_min_score}")
            else:
                if given.floors_deferred:
                    cand.gate = f"passed: reranker score {cand.rerank['score']:.3f} >= min {s.reranker_min_score}"
                kept.append(cand)
        kept.sort(key=lambda c: (-c.rerank["score"], c.rerank["rank_before"]))
        moved = 0
        for after, cand in enumerate(kept, start=1):
            cand.rerank["rank_after"] = after
            cand.rerank["moved"] = after != cand.rerank["rank_before"]
            moved += cand.rerank["moved"]
        outcome.update(status="reranked", moved=moved, dropped=len(scores) - len(kept))
        rec.io(outputs={"order": [{"id": c.record_id, **c.rerank} for c in kept], **outcome})
        empty = None
        if not kept:
            best = max(scores) if scores else 0.0
            empty = f"reranker: best score {best:.3f} < min {s.reranker_min_score}"
        return self.Outputs(kept, outcome, empty)

    def _fall_back(self, given: Inputs, rec: StageRecorder, outcome: dict) -> Outputs:
        """Keep the fused order; apply the gate's set-level decision now if it was deferred to the reranker."""
        outcome["fallback"] = "fused order kept"
        kept, empty = given.ranking, None
        if given.floors_deferred:
            outcome["fallback"] += "; deferred floors applied"
            kept = []
            for cand in given.ranking:
                verdict = cand.rerank or {}
                if verdict.get("floor_passed"):
                    cand.gate = verdict["floor_reason"]
                    kept.append(cand)
                else:
                    rec.drop(cand, f"gate (reranker fell back): {verdict.get('floor_reason')}")
            if not kept:
                empty = given.gate.get("reason") or "every candidate is weak on every signal"
        rec.note(f"reranker {outcome['status']}: {outcome.get('detail', '')}; {outcome['fallback']}")
        rec.io(outputs=outcome)
        return self.Outputs(kept, outcome, empty)
