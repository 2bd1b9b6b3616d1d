"""``agent-memory mcp --http``: the ASGI app behind uvicorn.

Routes: ``/mcp`` (MCP streamable HTTP, model keys), ``/hooks`` (host hook events, host keys) and
``/healthz`` (``{"ok": true}``, no key needed, for readiness checks). Every request to the first
two is checked in this order, and the first failure is the whole answer:

1. ``Origin``: a browser origin other than loopback or ``mcp.allowed_origins`` gets 403 (the MCP
   specification requires servers to validate it, against DNS rebinding);
2. ``Host``: when bound to loopback, a Host header naming anything but loopback gets 421;
3. the key: ``Authorization: Bearer <token>``; a missing, malformed, unknown or revoked token gets
   the same 401 and nothing else; a valid key of the wrong kind gets 403 saying which kind fits;
4. the body: larger than ``mcp.max_request_bytes`` (``mcp.max_hook_bytes`` for hooks) gets 413;
5. the protocol era (``/mcp``): a request for a protocol version without sessions (2026-07-28's
   per-request envelope) gets JSON-RPC ``-32022`` naming the handshake versions served, so the
   SDK's client falls back to ``initialize``: a memory session needs a session to belong to.

Token values are never logged or stored: the key is looked up by its hash (``keys.py``).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ..errors import MemoryCoreError
from .hook_payload import parse_event, turns_from_dicts
from .hook_recorder import HookRecorder
from .http_sessions import HttpSessions
from .keys import KeyPrincipal, verify_token
from .memory_session import McpMemorySession, Principal
from .owners import sweep_at_start
from .protocol import anyio, settle_heap

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
LOOPBACK_ORIGINS = ("http://127.0.0.1", "http://localhost", "http://[::1]")
THREADS = 8
UNAUTHORIZED = "a valid bearer token is required"


def _origin_allowed(origin: str, extra: list[str]) -> bool:
    for allowed in (*LOOPBACK_ORIGINS, *extra):
        if origin == allowed or (allowed in LOOPBACK_ORIGINS and origin.startswith(allowed + ":")
                                 and origin[len(allowed) + 1:].isdigit()):
            return True
    return False


def _host_allowed(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name in LOOPBACK_HOSTS


async def _respond(send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


def _rpc_error(code: int, message: str, data: Any = None, request_id: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class McpHttpApp:
    """The HTTP server of one store: MCP sessions for model keys, hook events for host keys."""

    def __init__(self, service, *, loopback_only: bool = True, ambient: bool | None = None) -> None:
        self.service = service
        self.settings = service.settings.mcp
        self.loopback_only = loopback_only
        self.ambient = ambient
        self.limiter = anyio.CapacityLimiter(THREADS)
        self.sessions = HttpSessions(idle_s=self.settings.session_idle_s, max_sessions=self.settings.max_sessions,
                                     limiter=self.limiter, json_response=self.settings.http_response == "json")
        self.on_ready = None  # called once the app has started (the CLI prints the URL)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            path = scope["path"].rstrip("/") or "/"
            if path == "/healthz":
                await _respond(send, 200, {"ok": True})
            elif path in ("/mcp", "/hooks"):
                await self._guarded(path, scope, receive, send)
            else:
                await _respond(send, 404, {"error": "not found: the MCP endpoint is /mcp, hook events go to /hooks"})

    async def _lifespan(self, receive, send) -> None:
        await receive()  # lifespan.startup
        await anyio.to_thread.run_sync(sweep_at_start, self.service, self.sessions.owner, limiter=self.limiter)
        settle_heap()
        async with anyio.create_task_group() as group:
            self.sessions.bind(group)
            group.start_soon(self.sessions.sweep_forever, self.service)
            await send({"type": "lifespan.startup.complete"})
            if self.on_ready is not None:
                self.on_ready()
            await receive()  # lifespan.shutdown
            await self.sessions.close_all()
            group.cancel_scope.cancel()
        await send({"type": "lifespan.shutdown.complete"})

    # -- the checks every request passes -----------------------------------------------------------

    async def _guarded(self, path: str, scope, receive, send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        origin = headers.get("origin")
        if origin is not None and not _origin_allowed(origin, self.settings.allowed_origins):
            await _respond(send, 403, _rpc_error(-32600, "Forbidden: this Origin may not call the memory server"))
            return
        if self.loopback_only and not _host_allowed(headers.get("host", "")):
            await _respond(send, 421, _rpc_error(-32600, "Misdirected request: the Host header does not name this server"))
            return
        key = await self._authenticate(headers.get("authorization"))
        if key is None:
            await _respond(send, 401, _rpc_error(-32001, UNAUTHORIZED), [(b"www-authenticate", b'Bearer realm="agent-memory"')])
            return
        if scope["method"] not in (("GET", "POST", "DELETE") if path == "/mcp" else ("POST",)):
            await _respond(send, 405, _rpc_error(-32600, f"Method not allowed at {path}"))
            return
        wanted = "model" if path == "/mcp" else "host"
        if key.kind != wanted:
            where = "the MCP endpoint (/mcp)" if key.kind == "model" else "the hook endpoint (/hooks)"
            await _respond(send, 403, _rpc_error(-32003, f"Forbidden: this is a {key.kind} key; it is accepted only at {where}"))
            return
        limit = self.settings.max_request_bytes if path == "/mcp" else self.settings.max_hook_bytes
        body = await _read_body(scope, receive, limit) if scope["method"] == "POST" else b""
        if body is None:
            await _respond(send, 413, _rpc_error(-32600, f"Request body too large (at most {limit} bytes)"))
            return
        if path == "/hooks":
            await self._hook(key, scope, body, send)
        else:
            await self._mcp(key, headers, scope, body, receive, send)

    async def _authenticate(self, header: str | None) -> KeyPrincipal | None:
        if not header or not header[:7].lower() == "bearer ":
            return None
        token = header[7:].strip()
        return await anyio.to_thread.run_sync(
            lambda: verify_token(self.service, token, touch_interval_s=self.settings.key_touch_interval_s),
            limiter=self.limiter)

    # -- /mcp --------------------------------------------------------------------------------------

    async def _mcp(self, key: KeyPrincipal, headers: dict[str, str], scope, body: bytes, receive, send) -> None:
        from mcp_types import PARSE_ERROR, UNSUPPORTED_PROTOCOL_VERSION
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        version = headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await _respond(send, 400, _rpc_error(
                UNSUPPORTED_PROTOCOL_VERSION, "this server serves the session-based protocol versions only: each MCP "
                "session is one memory session; use the initialize handshake",
                {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": version[:40]}))
            return
        replay = _replaying(body, receive) if scope["method"] == "POST" else receive
        session_id = headers.get("mcp-session-id")
        if session_id is not None:
            entry = self.sessions.get(session_id, key.key_id)
            if entry is None:
                await _respond(send, 404, _rpc_error(-32600, "Session not found"))
                return
            if scope["method"] == "DELETE":  # end it before answering: a 200 means extraction is queued
                await self.sessions.close(entry, why="deleted by the client")
                await _respond(send, 200, {})
                return
            if not await self.sessions.still_open(entry):
                await _respond(send, 404, _rpc_error(-32600, "Session not found"))
                return
            entry.in_flight += 1
            try:
                await entry.transport.handle_request(scope, replay, send)
            finally:
                entry.in_flight -= 1
            if entry.transport.is_terminated:
                await self.sessions.close(entry, why="terminated")
            return
        if scope["method"] != "POST":
            await _respond(send, 400, _rpc_error(-32600, "Bad request: no Mcp-Session-Id; open a session with an "
                                                 "initialize POST first"))
            return
        try:
            message = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            await _respond(send, 400, _rpc_error(PARSE_ERROR, "Parse error: the body is not JSON"))
            return
        if not isinstance(message, dict) or message.get("method") != "initialize" or "id" not in message:
            await _respond(send, 400, _rpc_error(-32600, "Bad request: no Mcp-Session-Id; the first request of a session "
                                                 "must be initialize"))
            return
        accepts_json, accepts_sse = _accepts(headers.get("accept", ""))
        if not (accepts_json and accepts_sse) or not headers.get("content-type", "").lower().startswith("application/json"):
            await _respond(send, 406, _rpc_error(-32600, "Not acceptable: send Content-Type application/json and "
                                                 "Accept: application/json, text/event-stream"))
            return
        if self.sessions.full():
            await _respond(send, 503, _rpc_error(-32603, "Too many open sessions; try again when one has ended"))
            return
        principal = Principal(key.agent_id, key.user_id, key.project_id, key.key_id)
        try:
            memory = await anyio.to_thread.run_sync(
                lambda: McpMemorySession(self.service, principal, ambient=self.ambient, transport="http",
                                         owner=self.sessions.owner), limiter=self.limiter)
        except MemoryCoreError as exc:  # e.g. the key's principal is no longer a valid id
            await _respond(send, 400, _rpc_error(-32602, f"could not open a memory session: {exc.message}"))
            return
        except Exception:
            log.exception("opening a memory session for key %s failed", key.key_id)
            await _respond(send, 500, _rpc_error(-32603, "Internal error: could not open a memory session"))
            return
        entry = await self.sessions.open(memory, key.key_id)
        status = await _status_of(entry.transport.handle_request, scope, replay, send)
        if status is None or status >= 400:
            await self.sessions.close(entry, why=f"its initialize was refused (HTTP {status})")

    # -- /hooks ------------------------------------------------------------------------------------

    async def _hook(self, key: KeyPrincipal, scope, body: bytes, send) -> None:
        principal = Principal(key.agent_id, key.user_id, key.project_id, key.key_id)

        def record() -> dict[str, Any]:
            request = json.loads(body)
            if not isinstance(request, dict):
                raise ValueError("the body must be a JSON object")
            event = parse_event(request.get("event"), request.get("payload"))
            turns = turns_from_dicts(request.get("turns", []))
            lines = request.get("transcript_lines")
            if lines is not None and (not isinstance(lines, int) or isinstance(lines, bool) or lines < 0):
                raise ValueError("transcript_lines must be a non-negative integer")
            return HookRecorder(self.service, principal, context=bool(request.get("context"))).record(event, turns, lines)

        try:
            result = await anyio.to_thread.run_sync(record, limiter=self.limiter)
        except MemoryCoreError as exc:
            await _respond(send, 400, {"ok": False, "error": exc.to_dict()})
        except (ValueError, RecursionError) as exc:  # JSON errors are ValueErrors
            message = "the body is not JSON" if isinstance(exc, json.JSONDecodeError) else str(exc)[:200]
            await _respond(send, 400, {"ok": False, "error": {"code": "invalid_input", "message": message}})
        except Exception:
            log.exception("recording a hook event for key %s failed", key.key_id)
            await _respond(send, 500, {"ok": False, "error": {"code": "internal_error", "message": "the event was not recorded"}})
        else:
            await _respond(send, 200, result)


def _accepts(header: str) -> tuple[bool, bool]:
    types_ = {part.split(";")[0].strip().lower() for part in header.split(",")}
    return (bool(types_ & {"application/json", "application/*", "*/*"}),
            bool(types_ & {"text/event-stream", "text/*", "*/*"}))


async def _read_body(scope, receive, limit: int) -> bytes | None:
    """The whole request body, or None as soon as it passes ``limit`` bytes."""
    for name, value in scope["headers"]:
        if name.lower() == b"content-length" and value.isdigit() and int(value) > limit:
            return None
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replaying(body: bytes, receive):
    """A ``receive`` that hands over the already read body once, then the client's own messages."""
    sent = False

    async def replay():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _status_of(app, scope, receive, send) -> int | None:
    """Run ``app`` for one request and return the HTTP status it answered with."""
    status: int | None = None

    async def watch(message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        await send(message)

    await app(scope, receive, watch)
    return status
