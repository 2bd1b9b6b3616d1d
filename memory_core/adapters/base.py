"""What every framework adapter shares: sessions, events, tools per trigger mode, result text.

An adapter translates one framework's lifecycle into calls on :class:`MemoryRuntime`, which uses
only the service's public API (``handle_event``, ``session``, ``Session.call_tool``,
``tool_schemas``). The runtime owns the rules both adapters must agree on, so that the contract
suite can hold them to the same behaviour:

- ingestion events ``session_started`` → ``turn_completed``… → ``session_ended`` go through
  ``service.handle_event`` and are passed to listeners in that order;
- the tools offered in each trigger mode, with the core's JSON schemas unchanged;
- the host's search in ``auto``/``hybrid``: at most once per user turn, only a non-empty result is
  handed back to the adapter, which appends it as a tool-result message;
- how a tool result (success or structured error) is written out for a model.

What reaches the transcript: user text, the assistant's text replies, and results of the host's
own (non-memory) tools. Results of the memory tools are not recorded: they are the store's own
output, and extracting them again at session end would turn stored memories into new "evidence".
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import IdentityError, InvalidInputError, NotFoundError, SessionOwnerError
from ..hostmem import open_host_memory
from .identity import Identity
from .modes import SEARCH_TOOL, TriggerMode, check_trigger_mode, host_searches, model_searches
from .policy import memory_policy

if TYPE_CHECKING:
    from ..service import MemoryService, Session

MEMORY_TOOL_NAMES = ("memory_search", "memory_get", "memory_write", "memory_revise", "memory_forget")
AUTO_CALL_PREFIX = "memory_auto_"


@dataclass(frozen=True)
class AdapterEvent:
    """One ingestion event as an adapter fired it (what listeners receive)."""

    type: str
    session_id: str
    framework: str
    role: str | None = None
    content: str | None = None
    extraction_run_id: str | None = None
    continues: str | None = None  # session_started of a later part: the session it continues


Listener = Callable[[AdapterEvent], None]
MAX_ID_CHARS = 128  # the longest id policy.scopes.validate_id accepts
_PART_SUFFIX = re.compile(r"\+[0-9]+$")


def part_id(conversation_id: str, number: int) -> str:
    """The memory session id of a conversation's ``number``-th part: the conversation's own id for
    the first, ``<id>+<number>`` for each part opened after the one before it ended."""
    return conversation_id if number == 1 else f"{conversation_id}+{number}"


def _check_owner(session: "Session", identity: Identity) -> None:
    if (session.agent_id, session.user_id) != (identity.agent_id, identity.user_id):
        raise SessionOwnerError(
            f"session {session.id} belongs to another principal, not agent {identity.agent_id} and user {identity.user_id}",
            session_id=session.id,
        )


def format_tool_result(result: dict[str, Any]) -> str:
    """A tool result as the text a model reads: the JSON itself, after a one-line error summary
    when the call failed, so a model that skims still sees what went wrong and why."""
    body = json.dumps(result, ensure_ascii=False, default=str)  # one line: JSON escapes newlines
    if result.get("ok") is False:
        error = result.get("error") or {}
        # the summary is one line however the message reads (it can quote a model's field names)
        summary = " ".join(f"Error ({error.get('code', 'error')}): {error.get('message', 'the memory tool failed')}".split())
        return f"{summary[:500]}\n{body}"
    return body


def join_prefix(policy: str, profile_text: str | None) -> str:
    """The text an adapter adds to the system prompt: the policy, then the profile block (when any)."""
    return "\n\n".join(part for part in (policy, profile_text) if part)


def drop_null_arguments(arguments: Any) -> Any:
    """Arguments without keys whose value is null: strict tool-calling formats make a model send
    every property, with null for the ones it means to leave out."""
    if isinstance(arguments, dict):
        return {key: value for key, value in arguments.items() if value is not None}
    return arguments


class MemoryRuntime:
    """The framework-neutral half of an adapter: one per adapter instance, safe across threads."""

    def __init__(self, service: "MemoryService", *, framework: str, trigger_mode: TriggerMode | str | None = None,
                 listeners: list[Listener] | tuple[Listener, ...] = (), ambient: bool | None = None) -> None:
        self.service = service
        self.framework = framework
        self.trigger_mode: TriggerMode = check_trigger_mode(trigger_mode or service.settings.adapters.trigger_mode)
        # The ambient profile is off unless the host turns it on (this argument, else the setting).
        if ambient is not None and not isinstance(ambient, bool):
            raise InvalidInputError(f"ambient must be true, false or None (the setting); got {ambient!r}", field="ambient")
        self.ambient = service.settings.ambient.enabled if ambient is None else ambient
        self._listeners = list(listeners)
        self._open: dict[str, "Session"] = {}  # conversation id -> the session of its open part
        self._viewed: set[str] = set()  # sessions whose first model call is recorded (this process)
        self._lock = threading.RLock()
        # hybrid with host_memory.enabled: refused here, at construction, without a passing fitness result
        self.host_memory = open_host_memory(service, self.trigger_mode)

    # -- prompt prefix and tools ----------------------------------------------------------------

    def policy(self) -> str:
        """The static memory-use policy text for this trigger mode."""
        return memory_policy(self.trigger_mode)

    def tool_names(self) -> list[str]:
        """Memory tools offered to the model in this trigger mode."""
        return [name for name in MEMORY_TOOL_NAMES if name != SEARCH_TOOL or model_searches(self.trigger_mode)]

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The core's tool definitions (name, description, input_schema) offered in this mode."""
        offered = set(self.tool_names())
        return [schema for schema in self.service.tool_schemas() if schema["name"] in offered]

    def context(self, session: "Session") -> dict[str, Any]:
        """The prefix recorded for ``session`` when it was opened (policy, ambient profile, tools).

        Read from the store on each call (a primary-key lookup): the recorded row is the one source,
        so every process serving the session sends the same prefix, and a record forgotten during
        the session leaves it at once (erasure replaces its line; nothing else ever changes it).
        """
        recorded = self.service.session_context(session.id)
        if recorded is None:
            recorded = self._record_context(session)
        return recorded

    def profile_text(self, session: "Session") -> str | None:
        """The session's ambient profile block as recorded at its start (None when off or empty)."""
        return self.context(session).get("profile_text")

    def prefix(self, session: "Session") -> str:
        """What the adapter adds to the system prompt: the policy, then the session's profile."""
        recorded = self.context(session)
        return join_prefix(recorded["policy"], recorded.get("profile_text"))

    def note_model_call(self, session: "Session", system_text: str, tools: Callable[[], list[dict[str, Any]]]) -> None:
        """Record the system text and tool list of the session's first model call (once per session)."""
        with self._lock:
            if session.id in self._viewed:
                return
            self._viewed.add(session.id)
        self.service.record_model_view(session.id, system_text=system_text, offered_tools=tools())

    def _record_context(self, session: "Session") -> dict[str, Any]:
        return self.service.open_session_context(
            session, policy=self.policy(), memory_tools=self.tool_schemas(), ambient=self.ambient,
            framework=self.framework, trigger_mode=self.trigger_mode)

    # -- events ---------------------------------------------------------------------------------

    def _emit(self, event: AdapterEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    def open(self, identity: Identity) -> "Session":
        """The open memory session of the conversation ``identity`` names, started (``session_started``)
        on first use in this process.

        The conversation's id is its first session's id. When that session has ended (the host
        called ``end_session``) and the conversation goes on, the next part is opened as a new
        session, ``<id>+2`` (then ``+3``...), whose ``session_started`` event names the part it
        continues. Refuses (SessionOwnerError, an IdentityError) a conversation whose sessions
        belong to another principal, and an id that itself ends in ``+<number>``.
        """
        conversation = identity.session_id
        if _PART_SUFFIX.search(conversation):
            raise IdentityError(
                f"session id {conversation!r} ends in '+<number>', which names a later part of a conversation; "
                "pass the conversation's own id (the adapter opens its parts itself, see docs/adapters.md)",
                session_id=conversation,
            )
        with self._lock:
            cached = self._open.get(conversation)
            if cached is not None:
                _check_owner(cached, identity)
                # another adapter instance or process may have ended it since: the store says
                if not self.service.session(cached.id).ended:
                    return cached
                del self._open[conversation]
            session, previous = self._open_part(identity)
            self._open[conversation] = session
        self._emit(AdapterEvent("session_started", session.id, self.framework, continues=previous))
        return session

    def _open_part(self, identity: Identity) -> tuple["Session", str | None]:
        """The conversation's open part (resumed), or its next part when the last one ended; with
        the id of the part before it. Called under the lock."""
        conversation, number, previous = identity.session_id, 1, None
        while True:
            session_id = part_id(conversation, number)
            if len(session_id) > MAX_ID_CHARS:
                raise IdentityError(
                    f"conversation {conversation!r} cannot go on after its session ended: the next part's id would be "
                    f"longer than {MAX_ID_CHARS} characters; use a shorter session id", session_id=conversation)
            try:
                stored = self.service.session(session_id)
            except NotFoundError:
                break
            _check_owner(stored, identity)
            if not stored.ended:
                break
            previous, number = session_id, number + 1
        self.service.handle_event({
            "type": "session_started", "agent_id": identity.agent_id, "user_id": identity.user_id,
            "session_id": session_id, "project_id": identity.project_id,
            "framework": self.framework, "trigger_mode": self.trigger_mode,
        })
        session = self.service.session(session_id)
        # The prefix (and the ambient profile in it) is fixed here, at session start.
        self._record_context(session)
        return session, previous

    def conversation_sessions(self, conversation_id: str) -> list[str]:
        """The ids of a conversation's memory sessions in the store, first part first."""
        ids: list[str] = []
        while len(candidate := part_id(conversation_id, len(ids) + 1)) <= MAX_ID_CHARS:
            try:
                self.service.session(candidate)
            except NotFoundError:
                break
            ids.append(candidate)
        return ids

    def session(self, session_id: str) -> "Session":
        """The open session of a conversation (by its id or the part's) in this runtime
        (IdentityError when it was never opened here)."""
        with self._lock:
            session = self._open.get(session_id) or next((s for s in self._open.values() if s.id == session_id), None)
        if session is None:
            raise IdentityError(f"no open {self.framework} memory session {session_id!r} in this process", session_id=session_id)
        return session

    def record_turn(self, session: "Session", role: str, content: str) -> None:
        """Append a transcript turn (``turn_completed``); blank text is not a turn."""
        if not isinstance(content, str) or not content.strip():
            return
        self.service.handle_event({"type": "turn_completed", "session_id": session.id, "role": role, "content": content})
        self._emit(AdapterEvent("turn_completed", session.id, self.framework, role=role, content=content))

    def end(self, session_id: str) -> str | None:
        """End the conversation's open part (``session_ended``); returns the queued extraction run id,
        if any. ``session_id`` is the conversation's id (or a part's). SessionClosedError when its
        last part has already ended; the conversation may still go on later (see :meth:`open`)."""
        with self._lock:
            self._open.pop(session_id, None)
            # the store says which part is the last (another instance may have opened one since)
            parts = self.conversation_sessions(session_id)
            target = parts[-1] if parts else session_id
            self._viewed.discard(target)
        run_id = self.service.handle_event({"type": "session_ended", "session_id": target}).get("extraction_run_id")
        self._emit(AdapterEvent("session_ended", target, self.framework, extraction_run_id=run_id))
        return run_id

    # -- tool calls and the host's search -------------------------------------------------------

    def call_tool(self, session: "Session", name: str, arguments: Any) -> dict[str, Any]:
        """Run a memory tool the model called; a tool not offered in this mode is refused like an
        unknown tool, so auto mode cannot be bypassed by a model that guesses the name."""
        if name not in self.tool_names():
            return {"ok": False, "error": {
                "code": "unknown_tool",
                "message": f"tool {name!r} is not offered in {self.trigger_mode} mode; available: {', '.join(self.tool_names())}",
            }}
        return session.call_tool(name, arguments)

    def host_search(self, session: "Session", user_text: str) -> dict[str, Any] | None:
        """The host's search for one user turn (auto and hybrid modes): the memory_search result
        when it has results, else None (nothing is appended for an empty or failed search).

        In hybrid mode with host-issued memory on, the turn's gaps are searched instead of the
        message, and only records that improve on a draft without them come back (logged in
        ``host_memory_decisions``; docs/host-memory.md)."""
        if not host_searches(self.trigger_mode) or not isinstance(user_text, str):
            return None
        query = user_text.strip()[: self.service.settings.retrieval.max_query_chars]
        if not query:
            return None
        if self.host_memory is not None:
            return self.host_memory.decide(session, user_text).result
        result = session.call_tool(SEARCH_TOOL, {"query": query}, origin="host")
        if result.get("ok") and result.get("results"):
            return result
        return None
