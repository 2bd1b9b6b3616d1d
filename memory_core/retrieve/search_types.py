"""Plain dataclasses for a search: candidates, the stage trace, explanations and the response (the
request is :mod:`.request`). Each has ``to_dict`` (JSON-able) and, where a logged search is
rebuilt, ``from_dict``.

Nothing here holds record text except :class:`SearchResult` (the record and the content handed
back); the log stores the rest, so a forgotten record leaves no text behind in the search log.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from .. import display
from ..store.records import Record
from .request import SearchRequest


def _shallow(obj: Any) -> dict[str, Any]:
    """Field name -> value without dataclasses.asdict's deep copy (which dominated log writes).

    Nested lists and dicts are shared with the object, not copied.
    """
    names = _FIELD_NAMES.get(type(obj))
    if names is None:  # dataclasses.fields() walks every field's kind on each call: once per class here
        names = _FIELD_NAMES[type(obj)] = tuple(f.name for f in fields(obj))
    return {name: getattr(obj, name) for name in names}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


@dataclass
class Candidate:
    """A record moving through the pipeline, with every signal and decision attached to it."""

    seq: int
    record_id: str
    type: str
    status: str
    scope: str
    created_at: str
    event_at: str | None = None
    dense_rank: int | None = None
    cosine: float | None = None
    lexical_rank: int | None = None
    lexical: float | None = None  # lexical score in [0, 1] (generate/lexical_score.py)
    lexical_terms: tuple[str, ...] = ()
    entity_rank: int | None = None
    entities: list[dict[str, str]] = field(default_factory=list)
    rest_rank: int | None = None  # rank in the fusion's name-stripped list (generate/name_stripped.rest_list)
    rest_cosine: float | None = None  # cosine to the query with its known names taken out
    fused_rank: int | None = None
    fused_score: float | None = None
    freshness: dict[str, float] | None = None
    score: float | None = None
    gate: str | None = None
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    rerank: dict[str, Any] | None = None
    tokens: int | None = None
    budget: str | None = None
    truncated: bool = False
    dropped_at: str | None = None
    dropped_reason: str | None = None
    record: Record | None = field(default=None, repr=False, compare=False)
    content: str | None = field(default=None, repr=False, compare=False)

    @property
    def generators(self) -> list[str]:
        """Which generators proposed this candidate."""
        found = []
        if self.dense_rank is not None:
            found.append("dense")
        if self.lexical_rank is not None:
            found.append("lexical")
        if self.entity_rank is not None:
            found.append("entity")
        return found

    def brief(self) -> dict[str, Any]:
        """Id plus the scores known so far (what stage traces list)."""
        out: dict[str, Any] = {"id": self.record_id}
        for name in ("dense_rank", "cosine", "lexical_rank", "lexical", "entity_rank", "rest_rank", "rest_cosine", "fused_rank", "score"):
            value = getattr(self, name)
            if value is not None:
                out[name] = round(value, 6) if isinstance(value, float) else value
        return out

    def to_dict(self) -> dict[str, Any]:
        """Every signal and decision, without the record or its text."""
        out = _shallow(self)
        del out["record"], out["content"]
        return out


@dataclass
class StageTrace:
    """What one stage saw, produced and dropped, and how long it took."""

    name: str
    status: str = "ran"  # "ran", "skipped", or "failed" (a query embedding that raised on its worker thread)
    ms: float = 0.0
    inputs: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return _shallow(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "StageTrace":
        return cls(**data)

    def _repr_html_(self) -> str:
        return display.html(self)

    def to_dataframe(self):
        """The records this stage output or dropped (with reasons) as a pandas DataFrame."""
        return display.frame(self)


@dataclass
class SearchTrace:
    """Every stage of one search in pipeline order."""

    search_id: str
    stages: list[StageTrace] = field(default_factory=list)
    total_ms: float = 0.0

    def stage(self, name: str) -> StageTrace:
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise KeyError(name)

    def timings(self) -> dict[str, float]:
        """Milliseconds per stage, in order."""
        return {s.name: s.ms for s in self.stages}

    def work_timings(self) -> dict[str, float]:
        """Milliseconds of each stage's own work, in order: like :meth:`timings`, but when the query
        was embedded on a worker thread, ``query_embedding`` is the embedding's own time, the stage
        that waited for the vector is charged its work without the wait, and a ``vector_wait`` entry
        just before it says how long the search waited (the part of the embedding not hidden)."""
        embedding = next((s for s in self.stages if s.name == "query_embedding"), None)
        waited = embedding.outputs.get("waited_ms") if embedding is not None else None
        if waited is None:
            return self.timings()
        where = embedding.outputs.get("waited_in")
        out: dict[str, float] = {}
        for stage in self.stages:
            if stage.name == where:
                out["vector_wait"] = waited
                out[stage.name] = round(max(stage.ms - waited, 0.0), 3)
            elif stage.name == "query_embedding":
                out[stage.name] = embedding.outputs.get("embedding_ms", stage.ms)
            else:
                out[stage.name] = stage.ms
        return out

    def stage_rows(self) -> list[dict[str, Any]]:
        """One row per stage: order, name, ran/skipped, milliseconds, drops, first note (the stage
        table of the admin app's explorer and of the notebook display)."""
        return [{"#": i, "stage": s.name, "status": s.status, "ms": round(s.ms, 3), "dropped": len(s.dropped),
                 "note": s.notes[0] if s.notes else ""} for i, s in enumerate(self.stages, 1)]

    def to_dict(self) -> dict[str, Any]:
        return {"search_id": self.search_id, "total_ms": self.total_ms, "stages": [s.to_dict() for s in self.stages]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SearchTrace":
        return cls(data["search_id"], [StageTrace.from_dict(s) for s in data["stages"]], data.get("total_ms", 0.0))

    def _repr_html_(self) -> str:
        return display.html(self)

    def to_dataframe(self):
        """One row per stage (name, status, ms, drops, notes) as a pandas DataFrame."""
        return display.frame(self)


@dataclass
class ResultExplanation:
    """Why one record was returned: its signals, ranks and every decision it survived."""

    record_id: str
    rank: int
    raw_query: str
    rewritten_query: str | None
    matched_by: list[str]
    generators: dict[str, dict[str, Any]]
    cosine: float | None
    fused_rank: int | None
    fused_score: float | None
    freshness: dict[str, float] | None
    rerank: dict[str, Any] | None
    source_kind: str | None
    status: str
    scope: str
    type: str
    created_at: str
    event_at: str | None
    valid_from: str | None
    valid_until: str | None
    expires_at: str | None
    entity_links: list[dict[str, Any]]
    gate: str | None
    collapse: str
    budget: str | None
    tokens: int | None
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        return _shallow(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ResultExplanation":
        return cls(**data)

    def _repr_html_(self) -> str:
        return display.html(self)

    def to_dataframe(self):
        """This explanation as a one-row pandas DataFrame."""
        return display.frame(self)

    def compact(self) -> dict[str, Any]:
        """The short form a model reads in a tool result."""
        out: dict[str, Any] = {"matched_by": self.matched_by, "generators": self.generators, "fused_rank": self.fused_rank}
        if self.freshness:
            out["freshness_factor"] = self.freshness.get("factor")
        if self.rerank:
            out["rerank"] = {k: self.rerank[k] for k in ("rank_before", "rank_after", "score") if k in self.rerank}
        out["gate"] = self.gate
        if self.truncated:
            out["truncated"] = True
        return out


@dataclass
class ResponseExplanation:
    """Why the response holds what it holds, or why it is empty."""

    raw_query: str
    rewritten_query: str | None
    rewrite_status: str
    scopes: dict[str, str]
    filter: dict[str, Any]
    candidates: dict[str, int]
    gate: dict[str, Any]
    collapsed: int
    rerank: dict[str, Any]
    budget: dict[str, Any]
    returned: int
    empty_reason: str | None
    summary: str
    dense_index: dict[str, Any] | None = None  # how the dense search ran: exact scan or approximate index, and why

    def to_dict(self) -> dict[str, Any]:
        return _shallow(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ResponseExplanation":
        return cls(**data)


@dataclass
class SearchResult:
    """A returned record, the text handed back (possibly truncated to the budget) and why."""

    record: Record | None
    content: str | None
    explanation: ResultExplanation

    @property
    def record_id(self) -> str:
        return self.explanation.record_id

    def to_dict(self, include_record: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"record_id": self.record_id, "explanation": self.explanation.to_dict()}
        if include_record:
            out["content"] = self.content
            out["record"] = self.record.to_dict() if self.record else None
        return out

    def to_tool_result(self) -> dict[str, Any]:
        """What the model sees for this result."""
        record = self.record
        assert record is not None
        return {
            "id": record.id,
            "type": record.type,
            "content": self.content,
            "scope": record.scope,
            "source_kind": record.source_kind,
            "status": record.status,
            "created_at": record.created_at,
            "event_at": record.event_at,
            "valid_from": record.valid_from,
            "valid_until": record.valid_until,
            "entities": [link["name"] for link in record.entity_links],
            "why": self.explanation.compact(),
        }

    def _repr_html_(self) -> str:
        return display.html(self)

    def to_dataframe(self):
        """This result (signals, decisions and content) as a one-row pandas DataFrame."""
        return display.frame(self)


@dataclass
class SearchResponse:
    """The answer to one search: results (possibly none), the reason when empty, and the trace."""

    search_id: str
    at: str
    request: SearchRequest
    results: list[SearchResult]
    explanation: ResponseExplanation | None  # None only for a logged search that failed
    empty_reason: str | None
    trace: SearchTrace
    total_ms: float
    from_log: bool = False

    @property
    def empty(self) -> bool:
        return not self.results

    @property
    def record_ids(self) -> list[str]:
        return [r.record_id for r in self.results]

    def to_dict(self, include_records: bool = True) -> dict[str, Any]:
        return {
            "search_id": self.search_id,
            "at": self.at,
            "request": self.request.to_dict(),
            "results": [r.to_dict(include_records) for r in self.results],
            "explanation": self.explanation.to_dict() if self.explanation else None,
            "empty_reason": self.empty_reason,
            "trace": self.trace.to_dict(),
            "total_ms": self.total_ms,
        }

    def to_tool_result(self) -> dict[str, Any]:
        """The JSON a model reads from memory_search."""
        explanation = self.explanation
        return {
            "ok": True,
            "search_id": self.search_id,
            "results": [r.to_tool_result() for r in self.results if r.record is not None],
            "empty_reason": self.empty_reason,
            "explanation": {
                "summary": explanation.summary,
                "query": explanation.raw_query,
                "rewritten_query": explanation.rewritten_query,
                "candidates": explanation.candidates,
                "returned": explanation.returned,
                **({"as_of": explanation.filter["as_of"]} if explanation.filter.get("as_of") else {}),
            },
        }

    def _repr_html_(self) -> str:
        return display.html(self)

    def to_dataframe(self):
        """One row per result (ranks, scores, gate, collapse, budget, content) as a pandas DataFrame."""
        return display.frame(self)
