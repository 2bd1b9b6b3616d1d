"""A second MCP client, written here from the specification (2025-11-25) and sharing no code with
the SDK: JSON-RPC 2.0 over streamable HTTP (httpx; SSE or JSON responses) and over a subprocess's
stdin/stdout (one JSON object per line). It checks the wire itself, so the protocol is tested by
more than the code that produced it.
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import httpx

PROTOCOL_VERSION = "2025-11-25"
CLIENT_INFO = {"name": "raw-test-client", "version": "1"}


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The JSON messages of an SSE body (``data:`` lines of each event; other fields ignored)."""
    messages, data = [], []
    # SSE ends a line only at CR, LF or CRLF; str.splitlines would also break inside a JSON string at
    # U+2028, U+0085 and the like (the tool schemas' whitespace patterns hold them literally)
    for line in re.split(r"\r\n|\r|\n", text) + [""]:
        if line == "":
            if data:
                payload = "\n".join(data)
                if payload.strip():
                    messages.append(json.loads(payload))
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" ") if line.startswith("data: ") else line[5:])
    return messages


class RawHttpSession:
    """One MCP session over streamable HTTP, by hand."""

    def __init__(self, url: str, token: str | None, *, headers: dict[str, str] | None = None) -> None:
        self.url = url
        self.http = httpx.Client(timeout=60)
        self.headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.headers.update(headers or {})
        self.session_id: str | None = None
        self.next_id = 1
        self.initialize_result: dict[str, Any] | None = None

    def post(self, body: bytes | dict | list, *, headers: dict[str, str] | None = None) -> httpx.Response:
        """POST one raw body with the session's headers (and ``Mcp-Session-Id`` once known)."""
        send = dict(self.headers)
        if self.session_id:
            send["Mcp-Session-Id"] = self.session_id
            send["MCP-Protocol-Version"] = PROTOCOL_VERSION
        send.update(headers or {})
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self.http.post(self.url, content=data, headers=send)

    @staticmethod
    def messages(response: httpx.Response) -> list[dict[str, Any]]:
        """The JSON-RPC messages of a response, SSE or plain JSON."""
        kind = response.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            return parse_sse(response.text)
        if kind.startswith("application/json") and response.content:
            body = response.json()
            return body if isinstance(body, list) else [body]
        return []

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return the JSON-RPC response with its id (result or error)."""
        request_id = self.next_id
        self.next_id += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            body["params"] = params
        response = self.post(body)
        replies = [m for m in self.messages(response) if m.get("id") == request_id]
        assert len(replies) == 1, f"{method}: HTTP {response.status_code}, {response.text[:500]}"
        reply = replies[0]
        assert reply.get("jsonrpc") == "2.0" and ("result" in reply) != ("error" in reply), reply
        return reply

    def initialize(self) -> dict[str, Any]:
        """The handshake: initialize, keep the session id, send notifications/initialized."""
        response = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}})
        assert response.status_code == 200, response.text
        self.session_id = response.headers.get("mcp-session-id")
        assert self.session_id, "the server sent no Mcp-Session-Id"
        reply = [m for m in self.messages(response) if m.get("id") == 0][0]
        self.initialize_result = reply["result"]
        note = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert note.status_code == 202, note.text
        return self.initialize_result

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def delete(self) -> httpx.Response:
        response = self.http.delete(self.url, headers={**self.headers, "Mcp-Session-Id": self.session_id or "",
                                                        "MCP-Protocol-Version": PROTOCOL_VERSION})
        return response

    def close(self) -> None:
        self.http.close()


class RawStdioSession:
    """One MCP session over a subprocess's stdin/stdout, by hand (newline-delimited JSON-RPC)."""

    def __init__(self, command: list[str], *, env: dict[str, str], cwd: str) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env, cwd=cwd)
        self.next_id = 1

    def send_line(self, line: bytes) -> None:
        assert b"\n" not in line
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def read_message(self) -> dict[str, Any]:
        line = self.proc.stdout.readline()
        assert line, "the server closed stdout: " + self.proc.stderr.read().decode(errors="replace")[-2000:]
        return json.loads(line)

    def reply_to(self, request_id: Any) -> dict[str, Any]:
        """Read messages until the response with ``request_id`` (notifications are skipped)."""
        while True:
            message = self.read_message()
            if "id" in message and message["id"] == request_id and ("result" in message or "error" in message):
                return message

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        request_id = self.next_id
        self.next_id += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            body["params"] = params
        self.send_line(json.dumps(body).encode())
        return self.reply_to(request_id)

    def initialize(self) -> dict[str, Any]:
        reply = self.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO})
        self.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
        return reply

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def close(self) -> tuple[int, str]:
        """Close stdin (the client leaves) and wait; returns (exit code, stderr)."""
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        return code, self.proc.stderr.read().decode(errors="replace")
