"""The memory_search tool: the model's way into the retrieval pipeline.

The session supplies the principal (agent, user) and, when rewriting is on, the current-turn
context (the session's latest transcript turns); the model supplies only the query and options.
The advertised ``limit`` and ``query`` bounds come from the retrieval settings (see
:func:`search_limits`), so the schema and the handler accept the same values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from ..service.session import call_origin
from ..settings import Settings
from .registry import register
from .schemas import RecordType, Timestamp, ToolInput, text, whole_number

MAX_QUERY = 100_000  # the largest retrieval.max_query_chars allows; the schema carries the configured one

if TYPE_CHECKING:
    from ..service import Session


class MemorySearchInput(ToolInput):
    """Search long-term memory for facts, past events and procedures relevant to the current task. Returns nothing when no stored memory is relevant; each result says why it matched."""

    query: text(MAX_QUERY) = Field(description="What to look for, as a standalone question or phrase, e.g. 'user's preferred answer style'.")
    types: list[RecordType] | None = Field(None, description="Only these memory types (semantic facts, episodic events, procedural how-tos).")
    time_from: Timestamp | None = Field(None, description="Only records whose event time is at or after this ISO-8601 date or time.")
    time_to: Timestamp | None = Field(None, description="Only records whose event time is at or before this ISO-8601 date or time (a date includes the whole day).")
    entity_hints: list[text(200)] = Field(default_factory=list, max_length=20, description="Names of people, projects, orgs or repos the search is about.")
    limit: whole_number(1, 500) | None = Field(None, description="Most results to return.")
    historical: bool = Field(False, description="Also search superseded and expired records (for questions about what used to be true).")


def search_limits(settings: Settings) -> dict[str, dict]:
    """JSON-schema bounds of memory_search taken from the settings the handler enforces."""
    retrieval = settings.retrieval
    return {"limit": {"maximum": retrieval.max_limit}, "query": {"maxLength": retrieval.max_query_chars}}


@register("memory_search", MemorySearchInput, limits=search_limits)
def memory_search(session: "Session", args: MemorySearchInput) -> dict:
    service = session.service
    settings = service.settings.retrieval
    context = None
    if settings.rewrite_enabled:
        context = session.recent_context(settings.rewrite_context_turns, settings.rewrite_context_chars)
    response = service.search(
        agent_id=session.agent_id, user_id=session.user_id, query=args.query, types=args.types,
        time_from=args.time_from, time_to=args.time_to, entity_hints=args.entity_hints, limit=args.limit,
        historical=args.historical, context=context, session_id=session.id, origin=call_origin(),
    )
    return response.to_tool_result()
