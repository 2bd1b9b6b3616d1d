"""One conversation between an agent and a user: transcript turns and tool calls."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from ..clock import Clock, format_ts
from ..errors import InvalidInputError, SessionClosedError
from ..inputs import check_text, parse_input_ts
from ..extract import runs
from ..policy.grants import ScopeAccess
from ..policy.scopes import Scope, parse_scope
from ..settings import Settings
from ..store import sessions
from ..store.db import Store
from ..telemetry import Telemetry, spans
from .tool_surface import ToolSurface

TURN_ROLES = ("user", "assistant", "tool", "system")
MAX_TURN_CHARS = 200_000


class SessionHost(Protocol):
    """What a session uses of its :class:`~memory_core.service.MemoryService` (tool handlers reach
    the rest of the service's public methods through ``session.service``)."""

    store: Store
    clock: Clock
    settings: Settings
    telemetry: Telemetry

    tools: ToolSurface

    def access(self, agent_id: str, user_id: str) -> ScopeAccess: ...

    def search(self, **arguments: Any) -> Any: ...


class Session:
    """One conversation between an agent and a user: transcript turns and tool calls."""

    def __init__(self, service: SessionHost, session_id: str, agent_id: str, user_id: str, project_id: str | None,
                 write_targets: dict[str, str], ended: bool = False) -> None:
        self.service = service
        self.id = session_id
        self.agent_id = agent_id
        self.user_id = user_id
        self.project_id = project_id
        self.write_targets = dict(write_targets)
        self.ended = ended

    def access(self) -> ScopeAccess:
        return self.service.access(self.agent_id, self.user_id)

    def resolve_target(self, label: str) -> Scope:
        """Symbolic write target → scope; the model never names scopes itself."""
        if label not in self.write_targets:
            raise InvalidInputError(
                f"unknown write target {label!r}; this session offers: {', '.join(sorted(self.write_targets))}",
                field="target", available=sorted(self.write_targets),
            )
        return parse_scope(self.write_targets[label])

    def record_turn(self, role: str, content: str, at: datetime | str | None = None) -> int:
        """Append a transcript turn; returns its number (0-based)."""
        if self.ended:
            raise SessionClosedError(f"session {self.id} has ended")
        if role not in TURN_ROLES:
            raise InvalidInputError(f"role must be one of {', '.join(TURN_ROLES)}", field="role")
        if not isinstance(content, str):
            raise InvalidInputError("turn content must be a string", field="content")
        if len(content) > MAX_TURN_CHARS:
            raise InvalidInputError(f"turn content is longer than {MAX_TURN_CHARS} characters", field="content")
        check_text(content, "content")
        when = format_ts(parse_input_ts(at, "at") if at is not None else self.service.clock.now())
        return sessions.append_turn(self.service.store, self.id, role, content, when)

    def recent_context(self, turns: int, chars: int) -> str | None:
        """The latest ``turns`` turns as 'role: text' lines (newest last), cut to the last ``chars`` characters."""
        if turns <= 0 or chars <= 0:
            return None
        rows = sessions.recent_turns(self.service.store, self.id, turns)
        if not rows:
            return None
        return "\n".join(f"{row['role']}: {row['content']}" for row in rows)[-chars:]

    def call_tool(self, name: str, arguments: dict | str | None, *, origin: str = "model") -> dict:
        """Run a tool as this session's principal; always returns a JSON-able dict.

        ``origin`` says who made the call (``model``, or ``host``/``admin``/``eval``); it is passed
        down as an argument (never offered in the model's tool schema) and a search logs it in
        ``search_log.origin``.
        """
        if self.ended:
            return {"ok": False, "error": SessionClosedError(f"session {self.id} has ended").to_dict()}
        with spans.tool_call(self.service.telemetry, self, name, origin) as span:
            result = self.service.tools.call(self, name, arguments, origin=origin)
            spans.tool_result(span, result)
        return result

    def tool_schemas(self) -> list[dict]:
        """Tool definitions with this session's write targets as the allowed values."""
        return self.service.tools.schemas(self.service.settings, sorted(self.write_targets))

    def end(self, *, trigger: str = "session_end", enqueue_actor: str | None = None, always_enqueue: bool = False) -> str | None:
        """End the session; enqueues an extraction run (returned) when extraction is on.

        The run is queued by :func:`memory_core.extract.runs.enqueue`, the one way runs are created,
        in the same transaction as the end. ``always_enqueue`` queues one even when
        ``extract_on_session_end`` is off (an uploaded transcript).
        """
        if self.ended:
            raise SessionClosedError(f"session {self.id} has already ended")
        service = self.service
        now = format_ts(service.clock.now())
        run_id = None
        with service.store.transaction() as conn:
            sessions.mark_ended(service.store, conn, self.id, self.agent_id, now)
            if always_enqueue or service.settings.extraction.extract_on_session_end:
                run_id = runs.enqueue(service.store, service.clock, self.id, trigger=trigger,
                                      actor=enqueue_actor or f"agent:{self.agent_id}")
        self.ended = True
        return run_id
