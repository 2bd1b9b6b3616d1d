"""``agent-memory mcp`` over stdio: one process, one principal, one memory session.

The host launches the command with the identity in its arguments (``--agent-id``, ``--user-id``,
``--project``); nothing a client sends can change it. The memory session opens before the first
message is read, so the instructions the client receives at initialisation already hold the
session's policy and ambient profile, and it ends when the client closes stdin (or the process is
asked to stop with SIGTERM or SIGINT), which queues its extraction run. Before it opens, the
sessions of servers on this host that died without ending theirs are ended (:func:`.owners.sweep`).

Both protocol eras the SDK serves work here: the initialize handshake and the 2026-07-28
per-request envelope. Over stdio the process is the session either way.
"""

from __future__ import annotations

import signal
import sys
from typing import Any

from .memory_session import McpMemorySession, Principal
from .owners import sweep_at_start, this_process
from .protocol import anyio, build_server, settle_heap, types
from .stdio_streams import JsonRpcReader, JsonRpcWriter, claimed_stdio

PARSE_ERROR = -32700

THREADS = 4  # tool calls running at once in one process (the service serialises its own writes)


class _Stop(Exception):
    """Raised from a signal handler so the session still ends cleanly."""


def serve_stdio(service, principal: Principal, *, ambient: bool | None = None, ready: Any = None) -> str | None:
    """Serve MCP on this process's stdin/stdout until the client leaves; returns the extraction run id.

    ``ready`` (optional) is called with the memory session once it is open (the CLI prints its id
    to stderr, which is never part of the protocol stream).
    """
    me = this_process()
    sweep_at_start(service, me)
    memory = McpMemorySession(service, principal, ambient=ambient, transport="stdio", owner=me)
    settle_heap()
    if ready is not None:
        ready(memory)
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}

    def stop(signum, frame):  # noqa: ARG001 - the signal handler's signature
        raise _Stop()

    for sig in previous:
        signal.signal(sig, stop)
    reason = "the server failed"
    try:
        anyio.run(_serve, memory)
        reason = "the client closed stdin"
    except (_Stop, KeyboardInterrupt):
        reason = "the server was stopped"
    except BaseExceptionGroup as group:  # anyio wraps the signal's exception in the task group's
        if not group.subgroup((_Stop, KeyboardInterrupt)):
            raise
        reason = "the server was stopped"
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        run_id = memory.end(reason)
    return run_id


async def _serve(memory: McpMemorySession) -> None:
    from mcp.server.stdio import stdio_server

    from mcp.shared.message import SessionMessage

    server = build_server(memory, anyio.CapacityLimiter(THREADS))
    parse_error = SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(
        code=PARSE_ERROR, message="Parse error: the line is not a JSON-RPC message")))
    # Pipes are read and written on the event loop by the server's own tasks (stdio_streams);
    # anything else through the SDK's transport and its threads.
    with claimed_stdio() as wire:
        if wire is not None:
            replies = JsonRpcWriter(wire[1])
            await server.run(JsonRpcReader(wire[0], replies, parse_error), replies, server.create_initialization_options())
        else:
            async with stdio_server() as (read_stream, write_stream):
                to_server, from_client = anyio.create_memory_object_stream(0)
                async with anyio.create_task_group() as group:
                    group.start_soon(_answer_unreadable_lines, read_stream, write_stream, to_server, parse_error)
                    await server.run(from_client, write_stream, server.create_initialization_options())
                    group.cancel_scope.cancel()
    sys.stdout.flush()


async def _answer_unreadable_lines(read_stream, write_stream, to_server, parse_error) -> None:
    """Pass the client's messages on; answer a line that is not a JSON-RPC message with a parse error
    (JSON-RPC 2.0 asks for one; the SDK's stdio loop would drop the line without a word)."""
    async with to_server:
        async for item in read_stream:
            if isinstance(item, Exception):
                await write_stream.send(parse_error)
            else:
                await to_server.send(item)
