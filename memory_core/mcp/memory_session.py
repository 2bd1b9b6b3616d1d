"""One MCP session as one memory session (framework ``mcp``): what it offers, how a call runs, its end.

Nothing here imports the MCP SDK: :mod:`.protocol` turns these plain dicts into the SDK's types.
The session is opened with the service's public API only (``start_session``,
``open_session_context``, ``record_model_view``, ``Session.call_tool``, ``Session.end``), so the
admin app's session context view shows an MCP session like an adapter's: the instructions and the
tool list the client was given, then every search and write the session made.

Identity is fixed when the session opens (from the launch configuration over stdio, from the
key over HTTP) and never read from a tool call: the tools' schemas have no identity, scope or
store arguments, and a call that adds one is refused by the schema (``additionalProperties`` is
false), so nothing is written.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from ..adapters.base import MEMORY_TOOL_NAMES, format_tool_result
from ..adapters.policy import memory_policy
from .owners import ProcessIdentity, end_once, record_owner

FRAMEWORK = "mcp"
TRIGGER_MODE = "tool_only"  # an MCP server only answers the tools the client calls; it never searches on its own
SESSION_META_KEY = "agent-memory/session_id"  # on every tool result: which memory session served the call

# What the server adds to the memory-use policy: it cannot see the conversation.
MCP_NOTE = (
    "This memory is reached through an MCP server, which never sees the conversation: a memory_write that claims "
    "user_statement or tool_result cannot be checked against the user's or a tool's words here, so it is kept as an "
    "agent_inference (provisional) record, and the result says so. Still quote the user's exact words as evidence: "
    "when the host reports its transcript, session-end extraction can confirm what the user said."
)

DOWNGRADE_NOTE = (
    "Saved as agent_inference (provisional): this MCP server never sees the conversation, so it cannot check the "
    "quote against the user's or a tool's words. It expires unless later evidence reinforces it; a host that reports "
    "its transcript (agent-memory hook) lets session-end extraction confirm what the user said."
)

# MCP tool annotations (hints a client may use, e.g. to ask before a destructive call).
ANNOTATIONS: dict[str, dict[str, Any]] = {
    "memory_search": {"title": "Search memory", "readOnlyHint": True, "openWorldHint": False},
    "memory_get": {"title": "Get a memory", "readOnlyHint": True, "openWorldHint": False},
    "memory_write": {"title": "Save a memory", "readOnlyHint": False, "destructiveHint": False,
                     "idempotentHint": False, "openWorldHint": False},
    "memory_revise": {"title": "Revise a memory", "readOnlyHint": False, "destructiveHint": False,
                      "idempotentHint": False, "openWorldHint": False},
    "memory_forget": {"title": "Forget a memory", "readOnlyHint": False, "destructiveHint": True,
                      "idempotentHint": True, "openWorldHint": False},
}


@dataclass(frozen=True)
class Principal:
    """Who an MCP session acts for: from the launch configuration (stdio) or the key (HTTP)."""

    agent_id: str
    user_id: str
    project_id: str | None = None
    key_id: str | None = None


def mcp_tool_definitions(service) -> list[dict[str, Any]]:
    """The five tools as MCP tool definitions: the core's JSON schemas unchanged, plus annotations."""
    out = []
    for schema in service.tool_schemas():
        if schema["name"] in MEMORY_TOOL_NAMES:
            out.append({"name": schema["name"], "description": schema["description"],
                        "inputSchema": schema["input_schema"], "annotations": dict(ANNOTATIONS[schema["name"]])})
    return out


def mcp_policy() -> str:
    """The memory-use policy an MCP session records: the adapters' tool_only text and the MCP note."""
    return memory_policy(TRIGGER_MODE) + "\n" + MCP_NOTE


class McpMemorySession:
    """The memory session behind one MCP session. Safe to call from several threads; ``end`` runs once.

    Its owner (this process, ``owner``) is recorded as soon as the session exists, so if the process
    dies without ending it, the next server on this host ends it (:mod:`.owners`).
    """

    def __init__(self, service, principal: Principal, *, ambient: bool | None = None, transport: str = "stdio",
                 owner: ProcessIdentity | None = None) -> None:
        self.service = service
        self.principal = principal
        self.ambient = service.settings.ambient.enabled if ambient is None else bool(ambient)
        self.session = service.start_session(agent_id=principal.agent_id, user_id=principal.user_id,
                                             project_id=principal.project_id, framework=FRAMEWORK,
                                             trigger_mode=TRIGGER_MODE)
        record_owner(service, self.session.id, transport, owner)
        self.tools = mcp_tool_definitions(service)
        self._names = {tool["name"] for tool in self.tools}
        # The prefix (and the ambient profile in it) is fixed here, once, for the whole session.
        recorded = service.open_session_context(self.session, policy=mcp_policy(), memory_tools=service.tool_schemas(),
                                                ambient=self.ambient, framework=FRAMEWORK, trigger_mode=TRIGGER_MODE)
        self.instructions = "\n\n".join(part for part in (recorded["policy"], recorded.get("profile_text")) if part)
        service.record_model_view(self.session.id, system_text=self.instructions, offered_tools=self.tools)
        self._end_lock = threading.Lock()
        self.extraction_run_id: str | None = None

    @property
    def id(self) -> str:
        return self.session.id

    def offers(self, name: object) -> bool:
        """Whether ``name`` is one of this session's tools."""
        return isinstance(name, str) and name in self._names

    def call(self, name: str, arguments: Any) -> dict[str, Any]:
        """Run a tool as the session's principal; always a JSON-able dict (``ok`` false on a refusal)."""
        result = self.session.call_tool(name, arguments)
        if name in ("memory_write", "memory_revise") and result.get("ok") and result.get("downgraded"):
            result = {**result, "notes": [*(result.get("notes") or []), DOWNGRADE_NOTE]}
        return result

    def result_text(self, name: str, result: dict[str, Any]) -> str:
        """The readable text of a result: the JSON, after a one-line summary of an error or a downgrade."""
        text = format_tool_result(result)
        if name in ("memory_write", "memory_revise") and result.get("ok") and result.get("downgraded"):
            text = DOWNGRADE_NOTE + "\n" + text
        return text

    def end(self, reason: str = "the client left") -> str | None:
        """End the memory session once (later calls return the first result); queues extraction.

        ``reason`` is kept in ``sessions.end_reason``. If another server already ended the session
        (its sweep took this process for dead or silent), nothing more happens and None is returned.
        """
        with self._end_lock:
            if not self.session.ended:
                _, self.extraction_run_id = end_once(self.service, self.session.id, reason)
                self.session.ended = True
            return self.extraction_run_id
