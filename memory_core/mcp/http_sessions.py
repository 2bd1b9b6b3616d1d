"""MCP sessions over streamable HTTP: each one is a memory session, owned by the key that opened it.

Built from the SDK's public parts (``StreamableHTTPServerTransport``, ``serve_loop``), not its
session manager, because each session needs its own server: the instructions a client receives at
``initialize`` are that session's policy and ambient profile, which depend on the key's principal.
A session is opened by an ``initialize`` POST without ``Mcp-Session-Id``; every later request
must carry the id and the same key (another key gets 404, as for an unknown id). It ends when the
client deletes it, after ``mcp.session_idle_s`` with no request in flight, or when the server
stops; in every case the memory session is ended and its extraction queued.

Its owner row (:mod:`.owners`) carries its last sign of life, written at most once per
``session_idle_s / 4`` on a request, and by the periodic sweep while a request is in flight, so
another server's idle rule never takes a served session for an abandoned one. The same sweep ends
the sessions of dead servers on this host and of silent servers anywhere.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from uuid import uuid4

from . import owners
from .memory_session import McpMemorySession
from .protocol import anyio, build_server

log = logging.getLogger(__name__)


@dataclass
class HttpSession:
    """One open MCP HTTP session."""

    id: str
    key_id: str
    memory: McpMemorySession
    transport: object  # mcp.server.streamable_http.StreamableHTTPServerTransport
    in_flight: int = 0  # requests being served (an open GET stream counts)
    touched: float = 0.0  # time.monotonic() of the last write of its last activity


class HttpSessions:
    """The open sessions of one server process, and the tasks that serve them."""

    def __init__(self, *, idle_s: float, max_sessions: int, limiter: anyio.CapacityLimiter,
                 json_response: bool = True, owner: owners.ProcessIdentity | None = None) -> None:
        self.idle_s = idle_s
        self.touch_every_s = idle_s / owners.TOUCH_FRACTION
        self.owner = owner or owners.this_process()
        self.json_response = json_response
        self.max_sessions = max_sessions
        self.limiter = limiter
        self._open: dict[str, HttpSession] = {}
        self._lock = threading.Lock()
        self._group = None

    def bind(self, task_group) -> None:
        """Serve sessions in ``task_group`` (the app's lifespan owns it)."""
        self._group = task_group

    def __len__(self) -> int:
        return len(self._open)

    def full(self) -> bool:
        return len(self._open) >= self.max_sessions

    def get(self, session_id: str, key_id: str) -> HttpSession | None:
        """The open session with that id if ``key_id`` opened it; None otherwise (unknown and not
        yours look the same)."""
        entry = self._open.get(session_id)
        return entry if entry is not None and entry.key_id == key_id else None

    async def open(self, memory: McpMemorySession, key_id: str) -> HttpSession:
        """Start serving a new session for an opened memory session; returns it (not yet initialised)."""
        from mcp.server.streamable_http import StreamableHTTPServerTransport

        if self._group is None:
            raise RuntimeError("the HTTP app's lifespan has not started")
        transport = StreamableHTTPServerTransport(mcp_session_id=uuid4().hex, idle_timeout=self.idle_s,
                                                  is_json_response_enabled=self.json_response)
        entry = HttpSession(transport.mcp_session_id, key_id, memory, transport, touched=time.monotonic())
        with self._lock:
            self._open[entry.id] = entry
        try:
            await self._group.start(self._serve, entry)
        except BaseException:
            await self.close(entry, why="it could not be started")
            raise
        return entry

    async def _serve(self, entry: HttpSession, *, task_status=anyio.TASK_STATUS_IGNORED) -> None:
        from mcp.server.runner import serve_loop

        server = build_server(entry.memory, self.limiter)
        why = "the client left"
        try:
            async with entry.transport.connect() as (read_stream, write_stream):
                task_status.started()
                with entry.transport.idle_scope:
                    await serve_loop(server, read_stream, write_stream, lifespan_state={}, session_id=entry.id)
                if entry.transport.idle_scope.cancelled_caught:
                    why = f"idle for {self.idle_s:g} s"
        except Exception:
            why = "it failed"
            log.exception("MCP session %s failed", entry.id)
        finally:
            await self.close(entry, why=why)

    async def close(self, entry: HttpSession, *, why: str = "closed") -> None:
        """Stop serving a session and end its memory session (queues extraction). Safe to repeat."""
        with self._lock:
            if self._open.pop(entry.id, None) is None:
                return
        with anyio.CancelScope(shield=True):
            if not entry.transport.is_terminated:
                await entry.transport.terminate()
            run_id = await anyio.to_thread.run_sync(entry.memory.end, why)
        log.info("MCP session %s ended (%s): memory session %s, extraction run %s", entry.id, why, entry.memory.id,
                 run_id or "not queued")

    async def close_all(self) -> None:
        """End every open session (the server is stopping)."""
        for entry in list(self._open.values()):
            await self.close(entry, why="the server is stopping")

    async def still_open(self, entry: HttpSession) -> bool:
        """Before serving a request: write the session's last activity if the last write is older than
        ``idle_s / 4``. False (and the session closed here) when another server has ended it.

        The write is bookkeeping, never a reason to refuse the request: when it fails (the store is
        locked, a connection dropped) the failure is logged, the request is served, and the write is
        tried again at the session's next request (or by the sweep while a request is in flight).
        """
        if time.monotonic() - entry.touched < self.touch_every_s:
            return True
        previous, entry.touched = entry.touched, time.monotonic()
        service = entry.memory.service
        try:
            if await anyio.to_thread.run_sync(owners.touch, service, [entry.memory.id], limiter=self.limiter):
                return True
            ended = await anyio.to_thread.run_sync(owners.ended_elsewhere, service, entry.memory.id, limiter=self.limiter)
        except Exception as exc:  # noqa: BLE001 - the request goes on; the write is retried
            entry.touched = previous
            log.warning("could not record the last activity of MCP session %s (memory session %s): %s; the request "
                        "is served and the write tried again at its next request", entry.id, entry.memory.id, _failure(exc))
            return True
        if not ended:
            return True
        await self.close(entry, why="ended by another server")
        return False

    async def sweep_forever(self, service) -> None:
        """Every ``idle_s / 4`` (at most a minute): keep the sessions with a request in flight alive
        in the store, then end dead servers' and silent servers' sessions (:func:`.owners.sweep`)."""
        interval = min(60.0, self.touch_every_s)
        while True:
            await anyio.sleep(interval)
            busy = [entry for entry in list(self._open.values()) if entry.in_flight]
            try:
                if busy:
                    await anyio.to_thread.run_sync(owners.touch, service, [e.memory.id for e in busy], limiter=self.limiter)
                    for entry in busy:
                        entry.touched = time.monotonic()
                ended = await anyio.to_thread.run_sync(lambda: owners.sweep(service, self.owner, idle_s=self.idle_s),
                                                       limiter=self.limiter)
                log.debug("MCP session sweep done: %d kept alive, %d ended", len(busy), len(ended))
            except Exception:  # noqa: BLE001 - a failed sweep is retried at the next one
                log.exception("the MCP session sweep failed")


def _failure(exc: BaseException) -> str:
    """What failed, for a log line: the exception's type and its first line (a store error names the
    statement's trouble, never its parameters; no token or memory content reaches it here)."""
    first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__
