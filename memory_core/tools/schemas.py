"""Tool inputs as pydantic models: exactly the JSON a model sends. Unknown fields are refused."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..clock import parse_ts

RecordType = Literal["semantic", "episodic", "procedural"]
EntityKind = Literal["person", "project", "org", "repo", "product", "other"]


class ToolInput(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


def _check_timestamp(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        parse_ts(value)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not an ISO-8601 date or time within the years 1-9999 (UTC): {str(value)[:80]!r}") from exc
    return value


def _inline_refs(schema: dict) -> dict:
    """Replace ``$ref``s to ``$defs`` by the definitions themselves: some model APIs and agent
    frameworks read only plain, self-contained JSON schema."""
    defs = schema.pop("$defs", {})

    def walk(node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(dict(defs[ref.split("/")[-1]]))
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


class ProcedureInput(ToolInput):
    """A reusable how-to: its name, when it applies, the steps and known pitfalls."""

    name: str = Field(min_length=1, max_length=120, description="Short name of the procedure; a later write with the same name is a new version.")
    trigger: str = Field(min_length=1, max_length=500, description="When the procedure applies.")
    steps: list[str] = Field(min_length=1, max_length=30, description="The steps, in order.")
    pitfalls: list[str] = Field(default_factory=list, max_length=30, description="Known mistakes to avoid.")

    @field_validator("steps", "pitfalls")
    @classmethod
    def _short_steps(cls, items: list[str]) -> list[str]:
        for item in items:
            if not isinstance(item, str) or not item.strip() or len(item) > 500:
                raise ValueError("each item must be a non-empty string of at most 500 characters")
        return items


class MemoryWriteInput(ToolInput):
    """Save one memory now. Use for something the user said or a tool returned that will matter later."""

    type: RecordType = Field(description="semantic: a fact or preference; episodic: something that happened; procedural: a reusable how-to.")
    content: str = Field(min_length=1, max_length=100_000, description="One short declarative statement, e.g. 'The user prefers concise answers.'")
    attribute: str | None = Field(None, max_length=100, description="What the fact is about, e.g. 'answer_style' or 'home_city'. A later record with the same attribute about the same entity replaces it. Required for procedural (the procedure's name).")
    target: str = Field("personal", min_length=1, max_length=64, description="Where to store it: one of the session's write targets (e.g. 'personal', 'current_project').")
    source_kind: Literal["user_statement", "tool_result", "agent_inference"] = Field(
        "agent_inference",
        description="user_statement or tool_result need a verbatim evidence quote from this conversation; otherwise it is stored as agent_inference (provisional).",
    )
    evidence: str | None = Field(None, max_length=100_000, description="The exact words from the conversation that support the content.")
    about: str | None = Field(None, min_length=1, max_length=200, description="Name of the person, project, org, repo or product the record is about (omit for the user themself).")
    about_kind: EntityKind = Field("other", description="Kind of the 'about' entity.")
    mentions: list[str] = Field(default_factory=list, max_length=20, description="Other named entities the record mentions.")
    tags: list[str] = Field(default_factory=list, max_length=20, description="Short labels for filtering.")
    event_at: str | None = Field(None, description="For episodic records: when it happened (ISO-8601).")
    valid_from: str | None = Field(None, description="The fact holds from this date (ISO-8601), if the conversation said so.")
    valid_until: str | None = Field(None, description="The fact holds until this date (ISO-8601), if the conversation said so.")
    review_at: str | None = Field(None, description="When the record should be reconsidered (ISO-8601).")
    procedure: ProcedureInput | None = Field(None, description="For procedural records: name, trigger, steps and pitfalls; content is then the description.")

    _ts = field_validator("event_at", "valid_from", "valid_until", "review_at")(_check_timestamp)

    @classmethod
    def model_json_schema(cls, *args, **kwargs) -> dict:  # type: ignore[override]
        return _inline_refs(super().model_json_schema(*args, **kwargs))

    @field_validator("mentions", "tags")
    @classmethod
    def _short_items(cls, items: list[str]) -> list[str]:
        for item in items:
            if not isinstance(item, str) or not item.strip() or len(item) > 200:
                raise ValueError("each item must be a non-empty string of at most 200 characters")
        return items


class MemoryGetInput(ToolInput):
    """Fetch one memory record by id."""

    record_id: str = Field(min_length=1, max_length=64, description="The record id, e.g. 'mem_0123abcd4567ef89'.")


class MemoryReviseInput(ToolInput):
    """Change a memory: write a corrected version, confirm it, or merge two entities."""

    action: Literal["update", "confirm", "merge_entities"] = Field(description="update: new version replacing the record; confirm: the record was observed again; merge_entities: two entities are the same.")
    record_id: str | None = Field(None, min_length=1, max_length=64, description="The record to update or confirm.")
    content: str | None = Field(None, min_length=1, max_length=100_000, description="For update: the corrected statement.")
    source_kind: Literal["user_statement", "tool_result", "agent_inference"] = Field("agent_inference", description="What supports the update; evidence rules as for memory_write.")
    evidence: str | None = Field(None, max_length=100_000, description="For update or confirm: exact supporting words from this conversation. A confirm without them does not promote a provisional record.")
    valid_from: str | None = None
    valid_until: str | None = None
    review_at: str | None = None
    source_entity_id: str | None = Field(None, max_length=64, description="For merge_entities: the entity that disappears.")
    target_entity_id: str | None = Field(None, max_length=64, description="For merge_entities: the entity that remains.")
    reason: str = Field(min_length=1, max_length=1000, description="Why the change is made (kept in the audit log).")

    _ts = field_validator("valid_from", "valid_until", "review_at")(_check_timestamp)


class MemoryForgetInput(ToolInput):
    """Permanently erase a memory record (and its earlier versions) when the user asks to forget it."""

    record_id: str = Field(min_length=1, max_length=64, description="The record to forget.")
    reason: str = Field(min_length=1, max_length=1000, description="Why it is forgotten (kept in the audit log; do not repeat the content).")
