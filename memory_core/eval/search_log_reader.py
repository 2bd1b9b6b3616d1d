"""Reading the search log: one row per memory_search call, as the evaluation sees it.

The harness never re-runs retrieval stages itself; everything it needs (per-generator candidate
lists, fused order, gate decision, final ids, per-stage latency) comes from the logged trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..store.db import dumps, loads

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
        from ..retrieve.search_log import decode_trace

        data = dict(row)
        trace = decode_trace(data.get("trace"))  # the stored trace is compressed: search its decoded text
        text = " ".join([*(str(data.get(k) or "") for k in ("request", "scopes", "result_ids", "empty_reason")), dumps(trace)])
        return cls(data["id"], data["raw_query"], list(loads(data.get("result_ids"), [])), data.get("empty_reason"),
                   trace, loads(data.get("stages"), {}) or {}, float(data.get("total_ms") or 0.0), text)

    def mentioned_ids(self) -> set[str]:
        """Every record id that appears anywhere in the logged request, scopes, trace or results."""
        return set(_RECORD_ID.findall(self.raw_text))

    def stage(self, name: str) -> dict:
        """One stage's logged trace (``{}`` when the stage is not in the log)."""
        return next((st for st in self.trace.get("stages", []) if st.get("name") == name), {})

    def generator(self, name: str) -> list[dict]:
        """Candidates of one generator (``dense``, ``lexical``, ``entity``) in rank order."""
        return list((self.stage(name).get("outputs") or {}).get("candidates") or [])

    def best_scores(self) -> dict[str, Any]:
        """The gate's inputs (best cosine, best BM25, entity matches), for failure messages."""
        outputs = self.stage("gate").get("outputs") or {}
        return {k: outputs.get(k) for k in ("best_cosine", "best_lexical", "entity_matches")}


def reply_result_ids(reply: dict) -> list[str]:
    """Record ids of a memory_search tool reply, in order."""
    out = []
    for item in reply.get("results") or []:
        if isinstance(item, dict):
            out.append(item.get("id") or item.get("record_id") or (item.get("record") or {}).get("id"))
        else:
            out.append(item)
    return out
