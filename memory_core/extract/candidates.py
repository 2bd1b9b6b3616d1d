"""Data shapes of session extraction: the transcript, candidates, review decisions.

The pydantic models are what an extractor or reviewer returns (the Anthropic implementations
validate the model's JSON against them, ``extra="forbid"``); the dataclasses are internal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..clock import format_ts

CandidateType = Literal["semantic", "episodic", "procedural"]
EntityKind = Literal["person", "project", "org", "repo", "product", "other"]
TemporalField = Literal["valid_from", "valid_until", "review_at"]
TEMPORAL_FIELDS: tuple[str, ...] = ("valid_from", "valid_until", "review_at")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TemporalClaim(_Strict):
    """A date attached to a candidate, with the words of the transcript that justify it."""

    expression: str = Field(min_length=1, max_length=200, description="The temporal expression, copied verbatim from the evidence turn, e.g. 'next Tuesday'.")
    value: str | None = Field(None, max_length=40, description="The date the expression denotes (ISO-8601), if you resolved it; the validator re-resolves it anyway.")


class Candidate(_Strict):
    """One proposed memory, before review and validation."""

    type: CandidateType = Field(description="semantic: a fact or preference; episodic: something that happened or was decided.")
    content: str = Field(min_length=1, max_length=1000, description="One short declarative sentence about the user or the named entity.")
    attribute: str | None = Field(None, max_length=100, description="What the fact is about when a newer value replaces an older one, e.g. 'home_city'.")
    about: str | None = Field(None, max_length=200, description="The entity the record is about; omit when it is the user.")
    about_kind: EntityKind = "other"
    mentions: list[str] = Field(default_factory=list, max_length=10, description="Other named entities in the content.")
    evidence: str = Field(min_length=1, max_length=2000, description="An exact, verbatim span of one transcript turn that states the fact.")
    evidence_turn: int | None = Field(None, ge=0, description="The number of the turn the evidence comes from.")
    source_kind: Literal["user_statement", "agent_inference"] = Field(
        "user_statement", description="user_statement only when a user turn says it outright; otherwise agent_inference."
    )
    target: str = Field("personal", max_length=64, description="Write target label offered by the session.")
    valid_from: TemporalClaim | None = None
    valid_until: TemporalClaim | None = None
    review_at: TemporalClaim | None = None
    tags: list[str] = Field(default_factory=list, max_length=10)


class SummaryProposal(_Strict):
    """The extractor's episodic summary of the session."""

    content: str = Field(min_length=1, max_length=1500, description="Two or three sentences on what happened and what was decided.")
    evidence: str = Field(min_length=1, max_length=2000, description="A verbatim span of one turn that anchors the summary.")
    evidence_turn: int | None = Field(None, ge=0)


# The most candidates one model reply is asked for (the schema a model sees says so). A reply is
# not refused for holding more: the runner splits the transcript part and asks again, so a long
# transcript is extracted in parts instead of failing (memory_core/extract/parts.py).
MAX_REPLY_CANDIDATES = 100


class ExtractionOutput(_Strict):
    """What an extractor returns for one transcript (or one part of it)."""

    candidates: list[Candidate] = Field(
        default_factory=list, json_schema_extra={"maxItems": MAX_REPLY_CANDIDATES},
        description=f"At most {MAX_REPLY_CANDIDATES} candidates; propose the clearest ones.",
    )
    summary: SummaryProposal | None = None


class CandidateRevision(_Strict):
    """A reviewer's narrowed version of a candidate. Only content and temporal fields may change;
    anything else it sets is overridden in code (see :mod:`memory_core.extract.revision`)."""

    content: str | None = Field(None, min_length=1, max_length=1000)
    valid_from: TemporalClaim | None = None
    valid_until: TemporalClaim | None = None
    review_at: TemporalClaim | None = None
    drop_temporal: list[TemporalField] = Field(default_factory=list, description="Temporal fields to remove.")
    # Fields a reviewer must not change; accepted in the schema so an attempt is visible and logged.
    type: CandidateType | None = None
    attribute: str | None = None
    about: str | None = None
    evidence: str | None = None
    source_kind: Literal["user_statement", "agent_inference", "tool_result", "system", "session_summary"] | None = None
    target: str | None = None
    mentions: list[str] | None = None


class ReviewDecision(_Strict):
    """Accept, reject or narrow one candidate."""

    verdict: Literal["accept", "reject", "revise"]
    reason: str = Field(min_length=1, max_length=1000)
    revision: CandidateRevision | None = None
    confidence: float | None = Field(None, ge=0.0, le=1.0, description="Logged only; status never depends on it.")


@dataclass
class Turn:
    turn: int
    role: str
    content: str
    at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {"turn": self.turn, "role": self.role, "content": self.content, "at": format_ts(self.at)}


@dataclass
class Transcript:
    """A session's turns plus the principal and write targets it was held under."""

    session_id: str
    agent_id: str
    user_id: str
    project_id: str | None
    write_targets: dict[str, str]
    started_at: datetime
    turns: list[Turn]
    part: str | None = None  # "part 2 of 5 (turns 40-79)" when an extractor sees only part of the session

    def turn(self, number: int) -> Turn | None:
        for t in self.turns:
            if t.turn == number:
                return t
        return None

    def window(self, number: int, radius: int) -> list[Turn]:
        """Turns within ``radius`` of ``number`` (the context a reviewer sees)."""
        return [t for t in self.turns if abs(t.turn - number) <= radius]

    def render(self) -> str:
        """Numbered transcript text for a model prompt."""
        return "\n".join(f"[turn {t.turn} | {t.role} | {format_ts(t.at)}]\n{t.content}" for t in self.turns)


@dataclass
class ReviewItem:
    """Everything a reviewer sees for one candidate."""

    index: int
    candidate: Candidate
    kind: str  # "fact" or "summary"
    evidence_role: str | None
    evidence_turn: int | None
    context: list[Turn]
    related: list[dict[str, Any]] = field(default_factory=list)
    transcript: Transcript | None = None
