"""A scripted stand-in for the Anthropic Messages API, for driving the real Claude Code offline.

Claude Code reads ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY``; pointed here, everything but the
model is the real host: its agent loop, its MCP client, its tool naming and permission checks, its
hooks and the transcript it writes. Only the model's turns come from a script.

``POST /v1/messages`` (with or without ``?beta=true``) is answered by ``script(request)``, which
returns the assistant's content blocks (``text`` and ``tool_use`` dicts); a streaming request gets
the Messages API's server-sent events (``message_start``, per block ``content_block_start`` /
``_delta`` / ``_stop``, ``message_delta`` with the stop reason, ``message_stop``), any other the JSON
message. Every request is kept in :attr:`ScriptedModel.requests` (path and JSON body), so a test
can read what the host really sent: the tools list, the tool results. Anything else gets 404.
"""

from __future__ import annotations

import itertools
import json
import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Script = Callable[[dict[str, Any]], list[dict[str, Any]]]
_ids = itertools.count(1)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_scripted_{next(_ids):04d}", "name": name, "input": arguments}


def last_user_blocks(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The content blocks of the request's last user message (a string becomes one text block)."""
    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    if not users:
        return []
    content = users[-1]["content"]
    return [text(content)] if isinstance(content, str) else list(content)


def tool_names(request: dict[str, Any]) -> set[str]:
    return {tool.get("name") for tool in request.get("tools") or []}


def _events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    start = {**message, "content": [], "stop_reason": None}
    events = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            empty = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            empty = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events += [("content_block_start", {"type": "content_block_start", "index": index, "content_block": empty}),
                   ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                   ("content_block_stop", {"type": "content_block_stop", "index": index})]
    events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"],
                                                                      "stop_sequence": None},
                                  "usage": {"output_tokens": message["usage"]["output_tokens"]}}),
               ("message_stop", {"type": "message_stop"})]
    return events


class _LoopbackServer(ThreadingHTTPServer):
    """No name lookup at bind (HTTPServer's ``server_bind`` asks the resolver for the address's name)."""

    daemon_threads = True

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


class ScriptedModel:
    """A loopback HTTP server on a free port; ``base_url`` goes into ``ANTHROPIC_BASE_URL``."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet: the requests are kept instead
                pass

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                with model._lock:
                    model.requests.append({"path": self.path, "body": body})
                if self.path.split("?")[0] != "/v1/messages":
                    return self._send(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"scripted model"}}')
                message = model._message(body)
                if body.get("stream"):
                    chunks = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in _events(message))
                    return self._send(200, "text/event-stream", chunks.encode())
                return self._send(200, "application/json", json.dumps(message).encode())

            def do_GET(self) -> None:  # noqa: N802
                with model._lock:
                    model.requests.append({"path": self.path, "method": "GET"})
                self._send(404, "application/json", b"{}")

            do_HEAD = do_GET

            def _send(self, status: int, content_type: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = _LoopbackServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _message(self, request: dict[str, Any]) -> dict[str, Any]:
        content = self.script(request)
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        return {"id": f"msg_scripted_{next(_ids):04d}", "type": "message", "role": "assistant",
                "model": request.get("model", "scripted"), "content": content, "stop_reason": stop,
                "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}

    def messages(self) -> list[dict[str, Any]]:
        """The bodies of the Messages API requests received so far."""
        with self._lock:
            return [r["body"] for r in self.requests if r["path"].split("?")[0] == "/v1/messages"]

    def __enter__(self) -> "ScriptedModel":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
