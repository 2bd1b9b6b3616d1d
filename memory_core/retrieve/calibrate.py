"""Calibrating the empty-result gate's floors on a labelled fixture.

    python -m memory_core.eval.fixture_calibrate_cli [--fixture tests/data/gate_calibration.json] [--out calib.json]

The fixture holds records of one principal, distractor records of another user (they only shape
BM25 statistics) and queries, each either answerable (with the keys of its relevant records) or
off-topic. The procedure: load the fixture through memory_write into a fresh store with the
configured embedder; run every query through the real pipeline with the floors disabled and read
each candidate's cosine, BM25 and entity match from the gate stage's trace; then sweep a grid of
(cosine floor, BM25 floor) pairs. A query counts as answered when any candidate passes (cosine or
BM25 at or above its floor, or an entity match). The chosen pair maximises the F1 of "answerable
queries answered, off-topic queries empty"; ties go to the higher share of relevant records among
the passing candidates, then to the higher floors.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "data" / "gate_calibration.json"
COSINE_GRID = [round(0.10 + 0.01 * i, 2) for i in range(71)]
BM25_GRID = [round(0.5 * i, 1) for i in range(1, 41)] + [math.inf]


@dataclass
class QuerySignals:
    query: str
    relevant: set[str]  # record ids
    candidates: list[dict[str, Any]]  # id, cosine, bm25, entity

    @property
    def answerable(self) -> bool:
        return bool(self.relevant)


def load_fixture(service, fixture: dict) -> dict[str, str]:
    """Write the fixture's records through memory_write; returns key -> record id."""
    principal = fixture["principal"]
    agent, user = principal["agent_id"], principal["user_id"]
    service.grant(agent, f"user:{user}", read=True, write=True, actor="calibration")
    service.grant("distractor-agent", "user:distractor", read=True, write=True, actor="calibration")
    session = service.start_session(agent_id=agent, user_id=user)
    ids: dict[str, str] = {}
    for item in fixture["records"]:
        args = {k: v for k, v in item.items() if k != "key"}
        result = session.call_tool("memory_write", args)
        if not result.get("ok"):
            raise RuntimeError(f"fixture record {item['key']} was refused: {result}")
        ids[item["key"]] = result["record_id"]
    other = service.start_session(agent_id="distractor-agent", user_id="distractor")
    for i, text in enumerate(fixture.get("distractors", [])):
        result = other.call_tool("memory_write", {"type": "semantic", "content": text, "attribute": f"distractor_{i}"})
        if not result.get("ok"):
            raise RuntimeError(f"distractor {i} was refused: {result}")
    insert_generated_distractors(service, fixture)
    return ids


def generated_distractors(fixture: dict) -> list[str]:
    """The fixture's template distractors, expanded with a fixed seed."""
    spec = fixture.get("distractor_templates")
    if not spec:
        return []
    rng = random.Random(0)
    out = []
    for i in range(int(fixture.get("distractor_count", 0))):
        template = spec["templates"][i % len(spec["templates"])]
        out.append(template.format(**{slot: rng.choice(values) for slot, values in spec["slots"].items()}))
    return out


def insert_generated_distractors(service, fixture: dict) -> int:
    """Insert the generated distractors straight into the store, without embeddings.

    They sit in another user's scope, so they can never be candidates; they exist so that FTS5's
    BM25 statistics (document count, term frequencies) look like a store of realistic size.
    """
    from ..clock import format_ts
    from ..store.records import Record, fts_sync, insert_record

    texts = generated_distractors(fixture)
    now = format_ts(service.clock.now())
    with service.store.transaction() as conn:
        for i, text in enumerate(texts):
            record = Record(
                id=f"mem_{0xd15700000000 + i:016x}", type="semantic", version=1, lineage_id=f"mem_{0xd15700000000 + i:016x}",
                content=text, subject_entity_id=None, attribute=None, subject=None, scope_kind="user", scope_id="distractor",
                source_kind="system", source_ref="calibration", creator_agent_id="calibration", evidence=None,
                evidence_session_id=None, evidence_turn=None, created_at=now, updated_at=now, event_at=None, expires_at=None,
                valid_from=None, valid_until=None, review_at=None, review_flagged_at=None, review_reason=None,
                confidence=0.95, status="confirmed",
            )
            insert_record(conn, record, None)
            fts_sync(conn, record.seq)
    return len(texts)


def collect(service, fixture: dict, ids: dict[str, str]) -> list[QuerySignals]:
    """Every query's candidates with their gate signals, from searches run with the floors off."""
    principal = fixture["principal"]
    settings = service.settings.retrieval.model_copy(update={"cosine_floor": -1.0, "bm25_floor": 0.0})
    retriever = service.retriever
    out = []
    for item in fixture["queries"]:
        response = retriever.search(agent_id=principal["agent_id"], user_id=principal["user_id"], query=item["query"],
                                    settings=settings)
        passed = response.trace.stage("gate").outputs.get("passed", [])
        candidates = [{"id": c["id"], "cosine": c.get("cosine"), "bm25": c.get("bm25"), "entity": bool(c.get("entity"))}
                      for c in passed]
        out.append(QuerySignals(item["query"], {ids[k] for k in item["relevant"]}, candidates))
    return out


def _passes(c: dict, cosine_floor: float, bm25_floor: float) -> bool:
    return c["entity"] or (c["cosine"] is not None and c["cosine"] >= cosine_floor) or (
        c["bm25"] is not None and c["bm25"] >= bm25_floor)


def evaluate(signals: list[QuerySignals], cosine_floor: float, bm25_floor: float) -> dict[str, Any]:
    """Query-level and candidate-level quality of one pair of floors."""
    tp = fp = fn = tn = 0
    passing = relevant_passing = relevant_total = 0
    for q in signals:
        passed = [c for c in q.candidates if _passes(c, cosine_floor, bm25_floor)]
        answered = bool(passed)
        if q.answerable:
            tp += answered
            fn += not answered
        else:
            fp += answered
            tn += not answered
        passing += len(passed)
        relevant_passing += sum(1 for c in passed if c["id"] in q.relevant)
        relevant_total += len(q.relevant)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "cosine_floor": cosine_floor, "bm25_floor": bm25_floor, "answered_answerable": tp, "answered_off_topic": fp,
        "empty_answerable": fn, "empty_off_topic": tn, "precision": round(precision, 4), "recall": round(recall, 4),
        "f1": round(f1, 4), "relevant_share_of_passing": round(relevant_passing / passing, 4) if passing else 0.0,
        "relevant_recall": round(relevant_passing / relevant_total, 4) if relevant_total else 0.0,
    }


def _grid(signals: list[QuerySignals]) -> list[dict[str, Any]]:
    """:func:`evaluate` over the whole grid, vectorised (the same numbers, thousands of times faster)."""
    import numpy as np

    flat = [(qi, c) for qi, q in enumerate(signals) for c in q.candidates]
    n_queries = len(signals)
    qidx = np.array([qi for qi, _ in flat], dtype=np.int64)
    cos = np.array([c["cosine"] if c["cosine"] is not None else -np.inf for _, c in flat], dtype=float)
    bm = np.array([c["bm25"] if c["bm25"] is not None else -np.inf for _, c in flat], dtype=float)
    ent = np.array([c["entity"] for _, c in flat], dtype=bool)
    rel = np.array([c["id"] in signals[qi].relevant for qi, c in flat], dtype=bool)
    answerable = np.array([q.answerable for q in signals], dtype=bool)
    relevant_total = sum(len(q.relevant) for q in signals)
    rows = []
    for cf in COSINE_GRID:
        base = ent | (cos >= cf)
        for bf in BM25_GRID:
            passed = base | (bm >= bf)
            answered = np.bincount(qidx[passed], minlength=n_queries) > 0
            tp = int((answered & answerable).sum())
            fp = int((answered & ~answerable).sum())
            fn = int((~answered & answerable).sum())
            tn = n_queries - tp - fp - fn
            n_pass, n_rel = int(passed.sum()), int((passed & rel).sum())
            precision = tp / (tp + fp) if tp + fp else 0.0
            recall = tp / (tp + fn) if tp + fn else 0.0
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            rows.append({
                "cosine_floor": cf, "bm25_floor": bf, "answered_answerable": tp, "answered_off_topic": fp,
                "empty_answerable": fn, "empty_off_topic": tn, "precision": round(precision, 4), "recall": round(recall, 4),
                "f1": round(f1, 4), "relevant_share_of_passing": round(n_rel / n_pass, 4) if n_pass else 0.0,
                "relevant_recall": round(n_rel / relevant_total, 4) if relevant_total else 0.0,
            })
    return rows


def sweep(signals: list[QuerySignals]) -> dict[str, Any]:
    """Evaluate the grid; return the chosen floors, the near-best band and the per-query signals."""
    rows = _grid(signals)
    best = max(rows, key=lambda r: (r["f1"], r["relevant_share_of_passing"], r["cosine_floor"], r["bm25_floor"]))
    cosine_only = [r for r in rows if r["bm25_floor"] == math.inf]
    band = [r["cosine_floor"] for r in cosine_only if r["f1"] >= 0.9 * best["f1"]]
    return {
        "chosen": best,
        "cosine_band_f1_within_90pct_bm25_off": [min(band), max(band)] if band else None,
        "bm25_values": sorted({r["bm25_floor"] for r in rows if r["f1"] == best["f1"] and r["cosine_floor"] == best["cosine_floor"]}),
        "queries": [{"query": q.query, "answerable": q.answerable,
                     "best_cosine": max((c["cosine"] for c in q.candidates if c["cosine"] is not None), default=None),
                     "best_bm25": max((c["bm25"] for c in q.candidates if c["bm25"] is not None), default=None),
                     "entity_match": any(c["entity"] for c in q.candidates)} for q in signals],
    }


class _PrefetchingEmbedder:
    """Wraps an embedder with a text -> vector cache filled in one batch up front, so the fixture's
    one-at-a-time writes and searches do not pay a forward pass each (the vectors are identical)."""

    def __init__(self, inner, texts: list[str]) -> None:
        self.inner = inner
        self.model_name, self.model_version, self.dim = inner.model_name, inner.model_version, inner.dim
        unique = list(dict.fromkeys(texts))
        self._cache = dict(zip(unique, inner.embed(unique))) if unique else {}

    def embed(self, texts: list[str]):
        import numpy as np

        missing = [t for t in texts if t not in self._cache]
        if missing:
            self._cache.update(zip(missing, self.inner.embed(missing)))
        return np.stack([self._cache[t] for t in texts]) if texts else self.inner.embed([])
