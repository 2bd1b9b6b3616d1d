"""Reading the search log: one row per memory_search call, as the evaluation sees it.

The harness never re-runs retrieval stages itself; everything it needs (per-generator candidate
lists, fused order, gate decision, final ids, per-stage latency) comes from the logged trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..store.db import loads

_RECORD_ID = re.compile(r"\bmem_[0-9a-f]{16}\b")


@dataclass
class SearchLogEntry:
    """One search_log row with its JSON columns decoded."""

    id: str
    raw_query: str
    result_ids: list[str]
    empty_reason: str | None
    trace: dict
    stages: dict
    total_ms: float
    raw_text: str = field(default="", repr=False)

    @classmethod
    def from_row(cls, row) -> "SearchLogEntry":
        data = dict(row)
        text = " ".join(str(data.get(k) or "") for k in ("request", "scopes", "trace", "result_ids", "empty_reason"))
        return cls(data["id"], data["raw_query"], list(loads(data.get("result_ids"), [])), data.get("empty_reason"),
                   loads(data.get("trace"), {}) or {}, loads(data.get("stages"), {}) or {}, float(data.get("total_ms") or 0.0), text)

    def mentioned_ids(self) -> set[str]:
        """Every record id that appears anywhere in the logged request, scopes, trace or results."""
        return set(_RECORD_ID.findall(self.raw_text))

    def generator(self, name: str) -> list[dict]:
        """Candidates of one generator (``dense``, ``lexical``, ``entity``) in rank order."""
        return generator_candidates(self.trace, name)

    def best_scores(self) -> dict[str, Any]:
        """Top score per generator, for failure messages."""
        out: dict[str, Any] = {}
        for name in ("dense", "lexical", "entity"):
            candidates = self.generator(name)
            out[name] = candidates[0].get("score") if candidates else None
        return out


def generator_candidates(trace: dict, name: str) -> list[dict]:
    """``[{"id", "rank", "score"}, ...]`` for one generator from a logged trace."""
    generators = trace.get("generators") or trace.get("candidates") or {}
    items = generators.get(name) or []
    out = []
    for rank, item in enumerate(items, start=1):
        if isinstance(item, dict):
            out.append({"id": item.get("id") or item.get("record_id"), "rank": item.get("rank", rank), "score": item.get("score")})
        elif isinstance(item, (list, tuple)):
            out.append({"id": item[0], "rank": rank, "score": item[1] if len(item) > 1 else None})
        else:
            out.append({"id": item, "rank": rank, "score": None})
    return out


def reply_result_ids(reply: dict) -> list[str]:
    """Record ids of a memory_search tool reply, in order."""
    out = []
    for item in reply.get("results") or []:
        if isinstance(item, dict):
            out.append(item.get("id") or item.get("record_id") or (item.get("record") or {}).get("id"))
        else:
            out.append(item)
    return out
