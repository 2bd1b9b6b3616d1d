"""The data of one write: the request, the outcome a caller gets, and the context the stages share."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..errors import MemoryCoreError
from ..policy.grants import ScopeAccess
from ..policy.scopes import Scope
from ..store.records import Record


@dataclass
class WriteRequest:
    """One record to write, with the principal it is written for."""

    type: str
    content: str
    scope: Scope
    source_kind: str
    agent_id: str
    user_id: str
    actor: str
    attribute: str | None = None
    about: str | None = None
    about_kind: str = "other"
    mentions: list[str] = field(default_factory=list)
    evidence: str | None = None
    session_id: str | None = None
    tags: list[str] = field(default_factory=list)
    event_at: datetime | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    review_at: datetime | None = None
    source_ref: str | None = None
    operation: str = "memory_write"
    evidence_verified: bool = False  # the caller (the extraction validator) already located the quote
    evidence_turn: int | None = None  # with evidence_verified: the turn the caller found the quote in
    dedupe: bool = True  # False for records that are never a duplicate of another (session summaries)
    revises: Record | None = None  # memory_revise: the live record this new version replaces
    procedure: dict[str, Any] | None = None  # procedural records: name, trigger, steps, pitfalls
    imported: "ImportedFields | None" = None  # an import: what the file keeps of the record (memory_core.portable)


@dataclass
class ImportedFields:
    """What an import keeps of a record from its file; the write path applies these to the record it
    creates (a reinforcement keeps the existing record as it is). ``prepare(conn)`` runs in the
    record's savepoint before entity resolution (it creates the file's entities under their ids)."""

    fields: dict[str, Any]  # id (if free), times, status, confidence, observations, review flags, lineage
    history: list[dict[str, Any]] = field(default_factory=list)  # earlier versions, inserted as they were
    prepare: Any = None
    # Records this import run created (shared by its requests): the claim rules compare an imported
    # record with the store's other records only; how records of one file relate is in the file.
    created: set[str] = field(default_factory=set)


@dataclass
class WriteOutcome:
    outcome: str  # "created" | "reinforced"
    record: Record
    requested_source_kind: str
    downgraded: bool = False
    downgrade_reason: str | None = None
    superseded: list[str] = field(default_factory=list)
    conflicts_with: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stages: dict[str, float] = field(default_factory=dict)
    total_ms: float = 0.0
    flagged_for_review: bool = False

    @property
    def summary(self) -> str:
        """Exactly what happened, in one line: created / reinforced <id> / superseded <ids> / conflict with <ids>."""
        if self.outcome == "reinforced":
            return f"reinforced {self.record.id}"
        parts = [f"created {self.record.id}"]
        if self.superseded:
            parts.append(f"superseded {', '.join(self.superseded)}")
        if self.conflicts_with:
            parts.append(f"conflict with {', '.join(self.conflicts_with)} (flagged for review)")
        return "; ".join(parts)

    def to_tool_result(self) -> dict[str, Any]:
        return {
            "ok": True,
            "record_id": self.record.id,
            "outcome": self.outcome,
            "summary": self.summary,
            "status": self.record.status,
            "source_kind": self.record.source_kind,
            "downgraded": self.downgraded,
            "downgrade_reason": self.downgrade_reason,
            "superseded": self.superseded,
            "conflicts_with": self.conflicts_with,
            "flagged_for_review": self.flagged_for_review,
            "notes": self.notes,
        }


@dataclass
class WriteRefusal:
    """A write the write path refused: the error the caller sees, the stage that refused it, and
    whether its write-log row was written (a failure to log never hides the refusal)."""

    error: MemoryCoreError
    stage: str | None
    logged: bool


@dataclass
class WriteContext:
    """What the stages of one write read and fill in."""

    req: WriteRequest
    access: ScopeAccess
    now: datetime
    ingestor: Any  # the Ingestor: stages reach the store, index, embedder, judge and settings through it
    source_kind: str = ""
    downgrade_reason: str | None = None
    evidence_turn: int | None = None
    evidence_role: str | None = None  # the role of the turn the quote was found in
    validation: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    vector: Any = None
    attribute: str | None = None
    subject_entity: str | None = None
    mentions: list[str] = field(default_factory=list)
    subject: str | None = None
    new_subject: bool = False  # the subject entity was created by this write (so no record has its subject yet)
    same_fact_read: Any = None  # the duplicate search's same-fact read, started as the transaction opened
    live_on_subject: list[Record] = field(default_factory=list)
    match: Any = None
    outcome: WriteOutcome | None = None
    conn: Any = None
    stopped: bool = False
