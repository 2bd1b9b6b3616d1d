"""The plan of one forget: every place that holds the memory, found before anything is erased.

Built by :func:`memory_core.ingest.erasure.plan_erasure`; ``to_dict`` and ``summary_lines`` are
what the admin app's confirmation form, :meth:`MemoryService.forget_preview` and the
``memory_forget`` tool result show. They carry ids and reasons, never the erased text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .erasure_text import MARKER


@dataclass
class ErasurePlan:
    """Everything one forget will erase, by place. ``to_dict`` is what the admin app shows."""

    requested: str
    records: list[dict[str, Any]] = field(default_factory=list)  # {id, version, why}
    not_forgotten: list[dict[str, Any]] = field(default_factory=list)  # {id, why}: live records close to it that stay
    turns: list[dict[str, Any]] = field(default_factory=list)  # {session_id, turn, spans}
    entities: list[dict[str, Any]] = field(default_factory=list)  # {id, name, aliases, why}
    candidates: list[tuple[str, int, int]] = field(default_factory=list)  # (run_id, attempt, idx)
    attempts: list[tuple[str, int]] = field(default_factory=list)  # extraction attempts whose error or detail repeat the text
    runs: list[str] = field(default_factory=list)  # extraction runs whose error repeats the text
    search_log: list[str] = field(default_factory=list)
    write_log: list[int] = field(default_factory=list)
    write_log_comparisons: list[int] = field(default_factory=list)  # other records' rows comparing with these
    events: list[int] = field(default_factory=list)
    session_contexts: list[str] = field(default_factory=list)  # sessions whose recorded prefix holds the text
    host_memory: list[str] = field(default_factory=list)  # host_memory_decisions rows that issued or quoted the text
    needles: list[str] = field(default_factory=list)  # internal: the memory's texts (redacted from transcripts)
    log_needles: list[str] = field(default_factory=list)  # internal: those plus summaries and entity names (from logs)
    queries: list[str] = field(default_factory=list)  # internal: the queries of the forgotten searches

    @property
    def record_ids(self) -> list[str]:
        return [r["id"] for r in self.records]

    def to_dict(self) -> dict[str, Any]:
        """The plan without the erased texts themselves (safe to log or display)."""
        return {
            "requested": self.requested,
            "records": self.records,
            "not_forgotten": self.not_forgotten,
            "transcript_turns": self.turns,
            "entities_removed": [{k: v for k, v in e.items()} for e in self.entities],
            "extraction_candidates": [{"run_id": r, "attempt": a, "idx": i} for r, a, i in self.candidates],
            "extraction_attempts": [{"run_id": r, "attempt": a} for r, a in self.attempts],
            "extraction_runs": self.runs,
            "search_log_rows": self.search_log,
            "write_log_rows": self.write_log,
            "write_log_comparisons": self.write_log_comparisons,
            "event_reasons_redacted": len(self.events),
            "session_prefixes": self.session_contexts,
            "host_memory_decisions": self.host_memory,
            "index": "FTS rows removed and the FTS index merged; vectors marked dead; WAL truncated",
        }

    def summary_lines(self) -> list[str]:
        """One plain line per place, for a confirmation form."""
        lines = []
        for rec in self.records:
            lines.append(f"record {rec['id']} (version {rec['version']}): {rec['why']}")
        for rec in self.not_forgotten:
            lines.append(f"not forgotten: record {rec['id']} {rec['why']}")
        for turn in self.turns:
            lines.append(f"transcript {turn['session_id']} turn {turn['turn']}: {turn['spans']} quoted span(s) replaced by {MARKER}")
        for ent in self.entities:
            lines.append(f"entity {ent['id']} and its {len(ent['aliases'])} alias(es): {ent['why']}")
        if self.candidates:
            lines.append(f"{len(self.candidates)} extraction candidate(s) redacted")
        if self.attempts or self.runs:
            lines.append(f"{len(self.attempts) + len(self.runs)} extraction attempt or run error(s) redacted")
        if self.search_log:
            lines.append(f"{len(self.search_log)} search-log row(s): the query replaced by {MARKER} (searches that "
                         "returned the record or repeated its text), with its words in the request and trace")
        if self.write_log:
            lines.append(f"{len(self.write_log)} write-log row(s) redacted")
        if self.write_log_comparisons:
            lines.append(f"{len(self.write_log_comparisons)} other write-log row(s): their comparisons with this memory redacted")
        if self.events:
            lines.append(f"{len(self.events)} audit-event reason(s) replaced by {MARKER}")
        if self.session_contexts:
            lines.append(f"{len(self.session_contexts)} recorded session prefix(es) (ambient profile): the text replaced by {MARKER}")
        if self.host_memory:
            lines.append(f"{len(self.host_memory)} host-issued memory decision(s) redacted")
        return lines
