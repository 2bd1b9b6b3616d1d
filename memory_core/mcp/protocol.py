"""The MCP SDK side of a session: a low-level ``Server`` whose handlers run one memory session's tools.

One ``Server`` serves one memory session (one per stdio process; one per HTTP MCP session), so
the instructions sent at initialisation are that session's own: the memory-use policy, then the
ambient profile when it is on, fixed for the whole session.

The SDK's low-level server is used rather than its decorator-based ``MCPServer`` because the
tools' JSON schemas must be exactly the core's (``service.tool_schemas()``), not schemas derived
from Python signatures. Tool calls run in worker threads (the service is synchronous); a limiter
bounds how many run at once.

Errors: an unknown tool is a protocol error (JSON-RPC ``-32602``, nothing runs); a refusal of the
memory service (bad arguments, no grant, not found) is a tool error a model can read: ``isError``
with the structured ``{"ok": false, "error": {...}}`` and the same as text.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..errors import FrameworkUnavailableError
from .memory_session import SESSION_META_KEY, McpMemorySession

SERVER_NAME = "agent-memory"

try:
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS
except ImportError as exc:  # pragma: no cover - exercised only without the extra installed
    raise FrameworkUnavailableError(
        f"the MCP server needs the mcp package ({exc.name} is missing): pip install 'agent-memory[mcp]'") from None


def server_version() -> str:
    """This package's version, as the server reports it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agent-memory")
    except PackageNotFoundError:
        return "0"


def settle_heap() -> None:
    """Collect once, then move every object alive now (modules, models, the embedder, the index)
    out of the cyclic collector's reach (``gc.freeze``). Called when a server has opened its store
    and is about to serve: a full collection then scans only what serving allocated since, not the
    whole loaded process again, which on a 1K store took about 100 ms, inside some tool call."""
    import gc

    gc.collect()
    gc.freeze()


def _tool(definition: dict[str, Any]) -> types.Tool:
    return types.Tool(name=definition["name"], description=definition["description"],
                      input_schema=definition["inputSchema"],
                      annotations=types.ToolAnnotations.model_validate(definition["annotations"]))


def call_result(memory: McpMemorySession, name: str, result: dict[str, Any]) -> dict[str, Any]:
    """A memory tool result as MCP content: structured content plus the same as readable text.

    Returned in its wire form (a ``CallToolResult``'s JSON names), not as the SDK's model: the SDK
    validates a handler's result against the negotiated version's schema whatever the handler
    returns, so a model built here would be validated and dumped once more for nothing (for a
    search, its whole structured content each time).
    """
    return {"content": [{"type": "text", "text": memory.result_text(name, result)}], "structuredContent": result,
            "isError": result.get("ok") is False, "_meta": {SESSION_META_KEY: memory.id},
            "resultType": "complete"}  # 2026-07-28 requires it (the model's default); older versions' schemas drop it


def build_server(memory: McpMemorySession, limiter: anyio.CapacityLimiter) -> Server:
    """An SDK server offering ``memory``'s five tools, with its instructions."""
    tools = [_tool(definition) for definition in memory.tools]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
        if not memory.offers(params.name):
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.name[:100]!r}; this server offers "
                           + ", ".join(sorted(t.name for t in tools)))
        arguments = params.arguments if params.arguments is not None else {}
        result = await anyio.to_thread.run_sync(partial(memory.call, params.name, arguments), limiter=limiter)
        return call_result(memory, params.name, result)

    return Server(SERVER_NAME, version=server_version(), title="agent-memory",
                  description="Long-term memory: search, get, write, revise and forget records.",
                  instructions=memory.instructions, on_list_tools=list_tools, on_call_tool=call_tool)
