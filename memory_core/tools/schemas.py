"""Tool inputs as pydantic models: exactly the JSON a model sends. Unknown fields are refused.

Types are strict, as JSON is: a string is never read as a number, ``true`` is not 1, and a number
is not a string. A whole number sent as ``3.0`` is the integer 3 (JSON Schema's ``integer`` admits
it). The same few field types are used everywhere, so one rule holds in every tool:

- identifiers (record and entity ids) and write-target labels: their characters only, so an id
  with a space or a newline in it or around it is refused;
- timestamps: ISO-8601 (``2026-03-05``, ``2026-03-05T10:00:00Z``, with seconds, a fraction, ``Z``
  or an offset), nothing around them, and a real date and time;
- text (content, queries, reasons, names, list items): anything, but not only whitespace.

Each rule is a JSON-schema ``pattern`` (plain character classes, so every regex dialect reads it
alike) and the same pattern is what the handler checks; bounds that come from the settings are
put into the schema by the tool's ``limits`` (:mod:`memory_core.tools.registry`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from ..clock import AS_OF_PATTERN, parse_ts

RecordType = Literal["semantic", "episodic", "procedural"]
EntityKind = Literal["person", "project", "org", "repo", "product", "other"]

# Every character some regex dialect (ECMA-262, Python, Rust) or Python's str.strip() counts as
# whitespace; text must hold at least one character outside them.
BLANK = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
NOT_BLANK = f"[^{BLANK}]"
IDENTIFIER = r"^[A-Za-z0-9_-]+$"
TARGET_LABEL = r"^[A-Za-z0-9_.@+-]+$"  # as memory_core.policy.scopes.validate_id allows for labels
TIMESTAMP = (r"^[0-9]{4}-[0-9]{2}-[0-9]{2}"
             r"(?:[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]{1,6})?)?(?:[Zz]|[+-][0-9]{2}:?[0-9]{2})?)?$")


class ToolInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, str_strip_whitespace=False)


def _check_timestamp(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        parse_ts(value)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not a date or time within the years 1-9999 (UTC): {str(value)[:80]!r}") from exc
    return value


def _whole_number(value: object) -> object:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def text(max_length: int, min_length: int = 1):
    """A string of at most ``max_length`` characters that is not only whitespace."""
    return Annotated[str, StringConstraints(min_length=min_length, max_length=max_length, pattern=NOT_BLANK)]


Identifier = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=IDENTIFIER)]
TargetLabel = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=TARGET_LABEL)]
Timestamp = Annotated[str, StringConstraints(min_length=10, max_length=40, pattern=TIMESTAMP), AfterValidator(_check_timestamp)]
# A date-time with its offset (memory_search's as_of): the same pattern the request's own check uses.
Instant = Annotated[str, StringConstraints(min_length=16, max_length=40, pattern=AS_OF_PATTERN), AfterValidator(_check_timestamp)]


def whole_number(ge: int, le: int):
    """An integer from ``ge`` to ``le`` (a float like ``3.0`` is read as 3; ``true`` and ``"3"`` are refused)."""
    return Annotated[int, Field(ge=ge, le=le), BeforeValidator(_whole_number)]  # bounds first: pydantic then writes minimum/maximum


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

    name: text(120) = Field(description="Short name of the procedure; a later write with the same name is a new version.")
    trigger: text(500) = Field(description="When the procedure applies.")
    steps: list[text(500)] = Field(min_length=1, max_length=30, description="The steps, in order.")
    pitfalls: list[text(500)] = Field(default_factory=list, max_length=30, description="Known mistakes to avoid.")


# The longest content and evidence any setting allows; the schema a model sees carries the
# configured bounds instead (write_limits in memory_core/tools/handlers.py).
MAX_TEXT = 100_000


class MemoryWriteInput(ToolInput):
    """Save one memory now. Use for something the user said or a tool returned that will matter later."""

    type: RecordType = Field(description="semantic: a fact or preference; episodic: something that happened; procedural: a reusable how-to.")
    content: text(MAX_TEXT) = Field(description="One short declarative statement, e.g. 'The user prefers concise answers.'")
    attribute: text(100) | None = Field(None, description="What the fact is about, e.g. 'answer_style' or 'home_city'. A later record with the same attribute about the same entity replaces it. Required for procedural (the procedure's name).")
    target: TargetLabel = Field("personal", description="Where to store it: one of the session's write targets (e.g. 'personal', 'current_project').")
    source_kind: Literal["user_statement", "tool_result", "agent_inference"] = Field(
        "agent_inference",
        description="user_statement or tool_result need a verbatim evidence quote from this conversation; otherwise it is stored as agent_inference (provisional).",
    )
    evidence: text(MAX_TEXT) | None = Field(None, description="The exact words from the conversation that support the content.")
    about: text(200) | None = Field(None, description="Name of the person, project, org, repo or product the record is about (omit for the user themself).")
    about_kind: EntityKind = Field("other", description="Kind of the 'about' entity.")
    mentions: list[text(200)] = Field(default_factory=list, max_length=20, description="Other named entities the record mentions.")
    tags: list[text(200)] = Field(default_factory=list, max_length=20, description="Short labels for filtering.")
    event_at: Timestamp | None = Field(None, description="For episodic records: when it happened (ISO-8601).")
    valid_from: Timestamp | None = Field(None, description="The fact holds from this date (ISO-8601), if the conversation said so.")
    valid_until: Timestamp | None = Field(None, description="The fact holds until this date (ISO-8601), if the conversation said so.")
    review_at: Timestamp | None = Field(None, description="When the record should be reconsidered (ISO-8601).")
    procedure: ProcedureInput | None = Field(None, description="For procedural records: name, trigger, steps and pitfalls; content is then the description.")

    @classmethod
    def model_json_schema(cls, *args, **kwargs) -> dict:  # type: ignore[override]
        return _inline_refs(super().model_json_schema(*args, **kwargs))


class MemoryGetInput(ToolInput):
    """Fetch one memory record by id."""

    record_id: Identifier = Field(description="The record id, e.g. 'mem_0123abcd4567ef89'.")


class MemoryReviseInput(ToolInput):
    """Change a memory: write a corrected version, confirm it, or merge two entities."""

    action: Literal["update", "confirm", "merge_entities"] = Field(description="update: new version replacing the record; confirm: the record was observed again; merge_entities: two entities are the same.")
    record_id: Identifier | None = Field(None, description="The record to update or confirm.")
    content: text(MAX_TEXT) | None = Field(None, description="For update: the corrected statement.")
    source_kind: Literal["user_statement", "tool_result", "agent_inference"] = Field("agent_inference", description="What supports the update; evidence rules as for memory_write.")
    evidence: text(MAX_TEXT) | None = Field(None, description="For update or confirm: exact supporting words from this conversation. A confirm without them does not promote a provisional record.")
    valid_from: Timestamp | None = None
    valid_until: Timestamp | None = None
    review_at: Timestamp | None = None
    source_entity_id: Identifier | None = Field(None, description="For merge_entities: the entity that disappears.")
    target_entity_id: Identifier | None = Field(None, description="For merge_entities: the entity that remains.")
    reason: text(1000) = Field(description="Why the change is made (kept in the audit log).")


class MemoryForgetInput(ToolInput):
    """Permanently erase a memory record when the user asks to forget it: its earlier versions, any
    other record stating the same fact from the same evidence (a second copy saved under another
    attribute), and the words wherever the store repeated them (transcript, summaries, logs)."""

    record_id: Identifier = Field(description="The record to forget.")
    reason: text(1000) = Field(description="Why it is forgotten (kept in the audit log; do not repeat the content).")
