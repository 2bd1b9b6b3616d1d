"""The memory_search tool: the model's way into the retrieval pipeline.

The session supplies the principal (agent, user) and, when rewriting is on, the current-turn
context (the session's latest transcript turns); the model supplies only the query and options.
The handler puts both into one :class:`~memory_core.retrieve.SearchRequest`, the object every layer
below passes on (the schema's fields are a subset of its fields, by the same names). The
advertised ``limit`` and ``query`` bounds come from the retrieval settings (see
:func:`search_limits`) and the hint bounds from the request's own checks, so the schema and the
handler accept the same values.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..retrieve.request import MAX_HINT_CHARS, MAX_HINTS, SearchRequest
from ..settings import Settings
from .handlers import Session
from .schemas import Instant, RecordType, Timestamp, ToolInput, text, whole_number

MAX_QUERY = 100_000  # the largest retrieval.max_query_chars allows; the schema carries the configured one


class MemorySearchInput(ToolInput):
    """Search long-term memory for facts, past events and procedures relevant to the current task. Returns nothing when no stored memory is relevant; each result says why it matched."""

    query: text(MAX_QUERY) = Field(description="What to look for, as a standalone question or phrase, e.g. 'user's preferred answer style'.")
    types: list[RecordType] | None = Field(None, description="Only these memory types (semantic facts, episodic events, procedural how-tos).")
    time_from: Timestamp | None = Field(None, description="Only records whose event time is at or after this ISO-8601 date or time.")
    time_to: Timestamp | None = Field(None, description="Only records whose event time is at or before this ISO-8601 date or time (a date includes the whole day).")
    entity_hints: list[text(MAX_HINT_CHARS)] = Field(default_factory=list, max_length=MAX_HINTS, description="Names of people, projects, orgs or repos the search is about.")
    limit: whole_number(1, 500) | None = Field(None, description="Most results to return.")
    historical: bool = Field(False, description="Also search superseded and expired records (for questions about what used to be true).")
    as_of: Instant | None = Field(None, description="Search the memory as it was at this instant: an ISO-8601 date-time with its offset, e.g. '2026-03-01T09:00:00Z' (a bare date or a time without an offset is refused). Not with historical.")
    as_of_mode: Literal["memory", "world"] | None = Field(None, description="With as_of: 'memory' (the default) returns what the memory held then, each version as it was; 'world' returns what was valid in the world then by the records' valid_from/valid_until, and may be in the future (planned events).")


def search_limits(settings: Settings) -> dict[str, dict]:
    """JSON-schema bounds of memory_search taken from the settings the handler enforces."""
    retrieval = settings.retrieval
    return {"limit": {"maximum": retrieval.max_limit}, "query": {"maxLength": retrieval.max_query_chars}}


def memory_search(session: Session, args: MemorySearchInput, *, origin: str | None = None) -> dict:
    """Run the search as the session's principal; ``origin`` (who made the call) goes into the
    request, and so into ``search_log.origin``."""
    service = session.service
    settings = service.settings.retrieval
    context = None
    if settings.rewrite_enabled:
        context = session.recent_context(settings.rewrite_context_turns, settings.rewrite_context_chars)
    request = SearchRequest(agent_id=session.agent_id, user_id=session.user_id, context=context, session_id=session.id,
                            origin=origin, **args.model_dump())
    return service.search(request).to_tool_result()
