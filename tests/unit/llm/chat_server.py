"""A chat-completions server on a free loopback port, answering from a queue of scripted replies.

It speaks the part of OpenAI's protocol our client uses (``POST /v1/chat/completions``) over real
HTTP, so the SDK, its retries, timeouts and parsing all run as they would against Ollama or vLLM.
Each reply is a function of the request handler and the request body; the helpers below make
the ordinary answer and every way a server or a weak model goes wrong: malformed bodies, bodies
cut off mid-stream, HTTP errors, answers that never come (until the test releases them).
``refused_formats`` makes the server refuse some ``response_format`` types with 400, as a server
without structured-output support does, without using up a queued reply.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[["_Handler", dict], None]


def completion(text: str | None, *, model: str = "test-model", finish_reason: str = "stop") -> dict:
    """A chat-completion body whose one choice says ``text``."""
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def answer(text: str | None, *, finish_reason: str = "stop") -> Reply:
    """The model answers ``text`` (``finish_reason`` 'length' for an answer cut at the token limit)."""
    def reply(handler: "_Handler", body: dict) -> None:
        handler.send_json(200, completion(text, model=body.get("model", "?"), finish_reason=finish_reason))
    return reply


def answer_json(obj: Any) -> Reply:
    """The model answers with ``obj`` as JSON text."""
    return answer(json.dumps(obj))


def http_error(status: int, message: str = "error", *, headers: dict[str, str] | None = None) -> Reply:
    """An HTTP error with an OpenAI-style error body."""
    def reply(handler: "_Handler", body: dict) -> None:
        handler.send_json(status, {"error": {"message": message, "type": "test_error", "code": status}}, headers=headers)
    return reply


def raw_body(data: bytes, *, content_type: str = "application/json", status: int = 200) -> Reply:
    """Bytes that are not a chat completion, sent whole."""
    def reply(handler: "_Handler", body: dict) -> None:
        handler.send_bytes(status, data, content_type)
    return reply


def cut_body(text: str = '{"verdict": "accept", "reason": "fine"}') -> Reply:
    """A completion whose body stops halfway: Content-Length promises more, then the connection closes."""
    def reply(handler: "_Handler", body: dict) -> None:
        data = json.dumps(completion(text)).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data[: len(data) // 2])
        handler.wfile.flush()
        handler.close_connection = True
        handler.connection.shutdown(socket.SHUT_RDWR)
    return reply


def never_answer() -> Reply:
    """No answer until the test (or the server's close) releases it: the client's timeout fires first."""
    def reply(handler: "_Handler", body: dict) -> None:
        handler.server.owner.release.wait(30)
        try:
            handler.send_json(200, completion('{"late": true}'))
        except OSError:  # the client gave up and closed the connection
            pass
    return reply


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return

    def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        with owner.lock:
            owner.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
            refused = (body.get("response_format") or {}).get("type") in owner.refused_formats
            reply = None if refused or not owner.replies else owner.replies.popleft()
        if self.path != "/v1/chat/completions":
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})
        elif refused:
            self.send_json(400, {"error": {"message": f"response_format {body['response_format']['type']} is not supported"}})
        elif reply is None:
            self.send_json(500, {"error": {"message": "the test queued no reply for this request"}})
        else:
            reply(self, body)

    def send_json(self, status: int, obj: Any, *, headers: dict[str, str] | None = None) -> None:
        self.send_bytes(status, json.dumps(obj).encode(), "application/json", headers=headers)

    def send_bytes(self, status: int, data: bytes, content_type: str, *, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: "ChatServer"


class ChatServer:
    """Serve on 127.0.0.1 at a free port until :meth:`close`; ``url`` is the base URL (…/v1)."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict] = []
        self.refused_formats: set[str] = set()
        self.release = threading.Event()
        self.lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), name="chat-server", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def queue(self, *replies: Reply) -> "ChatServer":
        self.replies.extend(replies)
        return self

    def bodies(self) -> list[dict]:
        return [r["body"] for r in self.requests]

    def close(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(10)


def refused_port_url() -> str:
    """A loopback base URL where nothing listens (the port was free a moment ago): connections are refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
