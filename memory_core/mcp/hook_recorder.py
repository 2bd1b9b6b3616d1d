"""What a host hook event does to the store: the host's conversation becomes a memory session.

- The first event of a host session (normally ``SessionStart``) opens a memory session (framework
  ``claude-code``) for the hook's principal and records the link in ``host_sessions``.
- Every event appends the transcript turns not yet recorded (``UserPromptSubmit`` and ``Stop``
  keep the session current; the prompt itself is taken from the transcript, so every turn has
  one source, the host's own file).
- ``SessionEnd`` appends the rest and ends the session, which queues session-end extraction over
  the real conversation: a quote the user said is found in a user turn, so it can be confirmed.
- A host session resumed after it ended continues in a new memory session from the next unread
  line of its transcript.

Each event is one write transaction: the session, its turns, the transcript position and the end
are recorded together or not at all (a failure, or a kill, leaves the previous state).

Hook sessions are never joined to MCP sessions: nothing the host passes links the two reliably
(docs/mcp.md, "Hook sessions and MCP sessions").
"""

from __future__ import annotations

from typing import Any

from ..clock import format_ts
from ..store import host_sessions
from .hook_payload import HookEvent, TranscriptTurn
from .memory_session import Principal

HOST = "claude-code"
CONTEXT_POLICY = ("Context added by the SessionStart hook: the user's ambient profile (stable answer preferences), "
                  "assembled once when the host session started and fixed for it.")


class HookRecorder:
    """Records host hook events for one principal (from the command line locally, from a host key remotely)."""

    def __init__(self, service, principal: Principal, *, host: str = HOST, context: bool = False) -> None:
        self.service = service
        self.principal = principal
        self.host = host
        self.context = context

    def record(self, event: HookEvent, turns: list[TranscriptTurn] | None = None,
               transcript_lines: int | None = None) -> dict[str, Any]:
        """Apply one checked event with the transcript turns read for it; returns what happened."""
        service, p = self.service, self.principal
        now = format_ts(service.clock.now())
        turns = list(turns or [])
        with service.store.transaction():
            row = host_sessions.latest_host_session(service.store, host=self.host, agent_id=p.agent_id,
                                                    user_id=p.user_id, host_session_id=event.host_session_id)
            cursor = int(row["transcript_lines"]) if row else 0
            fresh = [t for t in turns if t.line >= cursor]
            if row is not None and row["ended_at"] is not None and event.event == "SessionEnd" and not fresh:
                return {"ok": True, "event": event.event, "session_id": row["session_id"], "appended": 0,
                        "ended": True, "extraction_run_id": None, "note": "the host session had already ended"}
            opened = row is None or row["ended_at"] is not None
            if opened:
                session = service.start_session(agent_id=p.agent_id, user_id=p.user_id, project_id=p.project_id,
                                                framework=self.host)
                host_sessions.insert_host_session(service.store, {
                    "host": self.host, "host_session_id": event.host_session_id, "agent_id": p.agent_id,
                    "user_id": p.user_id, "session_id": session.id, "transcript_lines": cursor, "at": now,
                    "event": event.label})
            else:
                session = service.session(row["session_id"])
            for turn in fresh:
                session.record_turn(turn.role, turn.content, at=turn.at)
            lines = max(cursor, transcript_lines) if transcript_lines is not None else None
            if lines is None and fresh:
                lines = fresh[-1].line + 1
            ending = event.event == "SessionEnd"
            host_sessions.note_event(service.store, session_id=session.id, event=event.label, at=now,
                                     transcript_lines=lines, ended=ending)
            context = self._context(session) if event.event == "SessionStart" and opened and self.context else None
            run_id = session.end(trigger="session_end", enqueue_actor=f"hook:{self.host}") if ending else None
        result: dict[str, Any] = {"ok": True, "event": event.event, "session_id": session.id, "opened": opened,
                                  "appended": len(fresh), "ended": ending, "extraction_run_id": run_id}
        if context:
            result["additional_context"] = context
        return result

    def _context(self, session) -> str | None:
        """The ambient profile for the host's SessionStart output, recorded on the session; None when empty."""
        recorded = self.service.open_session_context(session, policy=CONTEXT_POLICY, memory_tools=[], ambient=True,
                                                     framework=self.host)
        text = recorded.get("profile_text")
        if text:
            self.service.record_model_view(session.id, system_text=text, offered_tools=[])
        return text or None
