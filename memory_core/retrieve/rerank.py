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
from pathlib import Path

from .pipeline import SearchContext


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
    name = "rerank"

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reranker")

    def run(self, ctx: SearchContext) -> SearchContext:
        s = ctx.settings
        enabled = s.reranker_enabled if ctx.request.rerank is None else ctx.request.rerank
        ctx.io(inputs={"enabled": enabled, "mode": s.reranker_mode, "candidates": len(ctx.ranking),
                       "timeout_s": s.reranker_timeout_s})
        if not enabled:
            ctx.rerank_outcome = {"status": "disabled"}
            ctx.skip("reranking is disabled")
            return ctx
        outcome: dict = {"mode": s.reranker_mode, "candidates": len(ctx.ranking)}
        try:
            scorer = ctx.deps.reranker(s)
            outcome["model"] = getattr(scorer, "model_name", type(scorer).__name__)
        except Exception as exc:  # a missing model must not fail the search
            outcome.update(status="unavailable", detail=f"{type(exc).__name__}: {exc}")
            return self._fall_back(ctx, outcome)
        future = self._executor.submit(scorer.score, ctx.query, [c.content or "" for c in ctx.ranking])
        try:
            scores = future.result(timeout=s.reranker_timeout_s)
        except FutureTimeout:
            outcome.update(status="timeout", detail=f"no scores within {s.reranker_timeout_s} s")
            return self._fall_back(ctx, outcome)
        except Exception as exc:
            outcome.update(status="failed", detail=f"{type(exc).__name__}: {exc}")
            return self._fall_back(ctx, outcome)
        if len(scores) != len(ctx.ranking):
            outcome.update(status="failed", detail=f"{len(scores)} scores for {len(ctx.ranking)} candidates")
            return self._fall_back(ctx, outcome)
        for before, (cand, score) in enumerate(zip(ctx.ranking, scores), start=1):
            cand.rerank = {**(cand.rerank or {}), "score": round(float(score), 6), "rank_before": before}
        kept = []
        for cand in ctx.ranking:
            if ctx.floors_deferred and cand.rerank["score"] < s.reranker_min_score:
                ctx.drop(cand, f"reranker score {cand.rerank['score']:.3f} < min {s.reranker_min_score}")
            else:
                if ctx.floors_deferred:
                    cand.gate = f"passed: reranker score {cand.rerank['score']:.3f} >= min {s.reranker_min_score}"
                kept.append(cand)
        kept.sort(key=lambda c: (-c.rerank["score"], c.rerank["rank_before"]))
        moved = 0
        for after, cand in enumerate(kept, start=1):
            cand.rerank["rank_after"] = after
            cand.rerank["moved"] = after != cand.rerank["rank_before"]
            moved += cand.rerank["moved"]
        ctx.ranking = kept
        outcome.update(status="reranked", moved=moved, dropped=len(scores) - len(kept))
        ctx.rerank_outcome = outcome
        ctx.io(outputs={"order": [{"id": c.record_id, **c.rerank} for c in kept], **outcome})
        if not kept:
            best = max(scores) if scores else 0.0
            ctx.halt(f"reranker: best score {best:.3f} < min {s.reranker_min_score}")
        return ctx

    def _fall_back(self, ctx: SearchContext, outcome: dict) -> SearchContext:
        """Keep the fused order; apply the gate's set-level decision now if it was deferred to the reranker."""
        outcome["fallback"] = "fused order kept"
        if ctx.floors_deferred:
            outcome["fallback"] += "; deferred floors applied"
            kept = []
            for cand in ctx.ranking:
                verdict = cand.rerank or {}
                if verdict.get("floor_passed"):
                    cand.gate = verdict["floor_reason"]
                    kept.append(cand)
                else:
                    ctx.drop(cand, f"gate (reranker fell back): {verdict.get('floor_reason')}")
            ctx.ranking = kept
            if not kept:
                ctx.halt(ctx.gate_summary.get("reason") or "every candidate is weak on every signal")
        ctx.rerank_outcome = outcome
        ctx.note(f"reranker {outcome['status']}: {outcome.get('detail', '')}; {outcome['fallback']}")
        ctx.io(outputs=outcome)
        return ctx
