"""The search request: the one place a search's parameters are written out, and how they are checked.

The memory_search tool handler builds a :class:`SearchRequest` from the model's arguments and the
session, and everything below it passes that object on: ``MemoryService.search``,
``Retriever.search`` and ``Retriever.search_batch`` take it (or its fields as keywords, which
build one), :meth:`SearchRequest.checked` validates and normalises it against the retrieval
settings in force, and the search log stores its ``to_dict``. A parameter added here reaches every
entry point; the tool schema (``tools/search_tool.py``) lists which of them a model may set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

from ..clock import AS_OF_PATTERN, end_of_day, format_ts, parse_ts
from ..errors import InvalidInputError
from ..inputs import check_texts
from ..policy.scopes import validate_id
from ..settings import RetrievalSettings
from ..store.as_of_queries import AS_OF_MODES
from ..store.records import RECORD_TYPES

# Who made a search (search_log.origin): the model's own memory_search call, the adapter host's
# search in auto/hybrid, a person in the admin app (explorer, replay), an evaluation harness, or the
# extractor looking up related records for its reviewer (kept out of the agent-facing rates).
SEARCH_ORIGINS = ("model", "host", "admin", "eval", "extraction")
MAX_HINTS = 20  # entity hints per search
MAX_HINT_CHARS = 200  # characters per entity hint
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass
class SearchRequest:
    """One search: who searches, for what, and how.

    As built by a caller the values may be loose (a ``datetime`` or a bare date for the time
    window, ``None`` for the limit or the hints); :meth:`checked` gives the normalised request the
    pipeline runs and the log keeps (ISO timestamps, a whole limit, stripped hints, the context cut
    to ``rewrite_context_chars``).
    """

    agent_id: str
    user_id: str
    query: str
    types: list[str] | None = None  # drawn from "semantic", "episodic", "procedural"; None: all
    time_from: str | datetime | None = None  # keep records whose event time is at or after this
    time_to: str | datetime | None = None  # ... at or before this; a bare date means the end of that day
    entity_hints: list[str] | None = None  # names (or ent_... ids) the caller knows the search is about
    limit: int | None = None  # None: retrieval.default_limit; at most retrieval.max_limit
    historical: bool = False  # also superseded and expired records
    as_of: str | datetime | None = None  # search the memory as of this instant (an ISO-8601 date-time with its offset)
    as_of_mode: str | None = None  # "memory" (what it held then; the default) or "world" (what was valid then)
    context: str | None = None  # current-turn conversation text for the optional rewriter
    rewrite: bool | None = None  # None follows retrieval.rewrite_enabled
    rerank: bool | None = None  # None follows retrieval.reranker_enabled
    session_id: str | None = None  # recorded in the search log
    replay_of: str | None = None  # the logged search this one replays
    origin: str | None = None  # who searched (SEARCH_ORIGINS); never part of the model's tool schema

    def checked(self, settings: RetrievalSettings) -> "SearchRequest":
        """This request validated and normalised against ``settings``; raises InvalidInputError
        naming the bad field and changes nothing."""
        return check_request(self, settings)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["types"] = list(self.types) if self.types else self.types
        out["entity_hints"] = list(self.entity_hints or [])
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SearchRequest":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def check_origin(origin: Any) -> str | None:
    """``origin`` if it is None or one of SEARCH_ORIGINS, else InvalidInputError naming them."""
    if origin is not None and origin not in SEARCH_ORIGINS:
        raise InvalidInputError(f"origin must be one of {', '.join(SEARCH_ORIGINS)}; got {str(origin)[:40]!r}", field="origin")
    return origin


def _timestamp(value: Any, name: str, at_end_of_day: bool) -> str | None:
    if value is None:
        return None
    try:
        parsed = parse_ts(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} is not an ISO-8601 date or time within the years 1-9999: {str(value)[:80]!r}", field=name) from exc
    if at_end_of_day and isinstance(value, str) and _DATE_ONLY.match(value.strip()):
        parsed = end_of_day(parsed)  # not "+1 day": 9999-12-31 has no next day
    return format_ts(parsed)


_AS_OF = re.compile(AS_OF_PATTERN.replace("$", r"\Z"))


def check_as_of(value: Any, mode: Any, historical: bool) -> tuple[str | None, str | None]:
    """The as-of instant (normalised to the stored UTC format) and mode of a request.

    The instant must be a date-time with its offset (``2026-03-01T09:00:00Z``,
    ``...+01:00``): a bare date or a time without an offset names a different instant in every
    time zone, so it is refused rather than guessed. A mode needs an instant; ``historical``
    cannot be combined with one (an as-of search already reaches the versions live then).
    Whether the instant may be in the future depends on the clock: see :func:`check_as_of_time`.
    """
    if value is None:
        if mode is not None:
            raise InvalidInputError("as_of_mode needs as_of (the instant to search at)", field="as_of_mode")
        return None, None
    if mode is None:
        mode = "memory"
    if mode not in AS_OF_MODES:
        raise InvalidInputError(f"as_of_mode must be one of {', '.join(AS_OF_MODES)}; got {str(mode)[:40]!r}", field="as_of_mode")
    if historical:
        raise InvalidInputError("historical and as_of cannot be combined: an as-of search already reaches the versions "
                                "live at that instant", field="historical")
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise InvalidInputError("as_of must carry a time zone (a naive datetime is ambiguous)", field="as_of")
    elif isinstance(value, str):
        if not _AS_OF.match(value):
            raise InvalidInputError("as_of must be an ISO-8601 date-time with its offset, e.g. 2026-03-01T09:00:00Z or "
                                    f"2026-03-01T10:00:00+01:00 (a date or a time without an offset is ambiguous): {value[:80]!r}",
                                    field="as_of")
    else:
        raise InvalidInputError("as_of must be an ISO-8601 date-time string", field="as_of")
    return _timestamp(value, "as_of", at_end_of_day=False), mode


def check_as_of_time(request: "SearchRequest", now: str) -> None:
    """A checked request's as-of instant against the clock: the memory cannot say what it will
    hold, so memory mode refuses an instant after ``now``; world mode allows one (what the memory
    believes will be valid then, e.g. a planned event)."""
    if request.as_of and request.as_of_mode == "memory" and request.as_of > now:
        raise InvalidInputError(f"as_of {request.as_of} is in the future (now {now}): the memory cannot say what it will "
                                "hold; use as_of_mode 'world' for what will be valid then", field="as_of")


def check_request(request: SearchRequest, settings: RetrievalSettings) -> SearchRequest:
    """See :meth:`SearchRequest.checked`."""
    validate_id(request.agent_id, "agent_id")
    validate_id(request.user_id, "user_id")
    if request.session_id is not None:
        validate_id(request.session_id, "session_id")
    check_origin(request.origin)
    query = request.query
    check_texts({"query": query, "entity_hints": request.entity_hints, "context": request.context})
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query must be a non-empty string", field="query")
    if len(query) > settings.max_query_chars:
        raise InvalidInputError(f"query is {len(query)} characters; the limit is {settings.max_query_chars}", field="query")
    types = request.types
    if types is not None:
        if isinstance(types, str) or not all(t in RECORD_TYPES for t in types):
            raise InvalidInputError(f"types must be a list drawn from {', '.join(RECORD_TYPES)}", field="types")
        types = [t for t in RECORD_TYPES if t in types] or None
    time_from = _timestamp(request.time_from, "time_from", at_end_of_day=False)
    time_to = _timestamp(request.time_to, "time_to", at_end_of_day=True)
    if time_from and time_to and time_from > time_to:
        raise InvalidInputError("time_from is after time_to", field="time_from")
    hints = list(request.entity_hints or [])
    if len(hints) > MAX_HINTS or not all(isinstance(h, str) and h.strip() and len(h) <= MAX_HINT_CHARS for h in hints):
        raise InvalidInputError(f"entity_hints must be at most {MAX_HINTS} non-empty names of up to {MAX_HINT_CHARS} characters",
                                field="entity_hints")
    limit = request.limit
    if limit is None:
        limit = min(settings.default_limit, settings.max_limit)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= settings.max_limit:
        raise InvalidInputError(f"limit must be an integer from 1 to {settings.max_limit}", field="limit")
    as_of, as_of_mode = check_as_of(request.as_of, request.as_of_mode, bool(request.historical))
    context = request.context
    if context is not None:
        if not isinstance(context, str):
            raise InvalidInputError("context must be a string", field="context")
        context = context[-settings.rewrite_context_chars:] if settings.rewrite_context_chars else ""
    return replace(request, types=types, time_from=time_from, time_to=time_to, entity_hints=[h.strip() for h in hints],
                   limit=limit, historical=bool(request.historical), context=context,
                   as_of=as_of, as_of_mode=as_of_mode)
