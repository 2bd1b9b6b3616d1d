"""The floor of the MCP latency benchmark: a bare ``mcp.server.MCPServer`` whose one tool returns a
constant small dict, launched the way ``agent-memory mcp`` is, so the same SDK client measures what
the SDK and the transport cost with none of our code on the server side.

    python -m benchmarks.mcp_floor stdio
    python -m benchmarks.mcp_floor http      # prints "floor MCP on http://127.0.0.1:PORT/mcp" to stderr

The tool (``ping``) is a plain function, so the SDK runs it in a worker thread, as our server runs
every memory tool; it returns ``{"ok": True}``, which the SDK sends as structured content plus the
same as JSON text (the shape of our results). The HTTP server is started as ours is
(``memory_core/mcp/serve_cli.py``): uvicorn on a pre-bound loopback TCP socket with Nagle's
algorithm off, access log off, log level warning, JSON responses (no event stream), the SDK's own
DNS-rebinding checks (Origin and Host) on. It has no keys: the SDK's session manager and starlette
routing stand where our request checks stand.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

from mcp.server import MCPServer

PING_RESULT = {"ok": True}


def build() -> MCPServer:
    """The bare server: one constant tool, no instructions beyond a line."""
    server = MCPServer("mcp-floor", instructions="A benchmark floor: one constant tool.", log_level="WARNING")

    @server.tool(name="ping", description="Returns a constant small result.")
    def ping() -> dict[str, Any]:
        return dict(PING_RESULT)

    @server.tool(name="ping_inline", description="The same, run on the event loop (no worker thread).")
    async def ping_inline() -> dict[str, Any]:
        return dict(PING_RESULT)

    return server


def serve_http() -> None:
    """Serve streamable HTTP on a free loopback port, the way ``agent-memory mcp --http`` does."""
    import uvicorn

    app = build().streamable_http_app(json_response=True, host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"floor MCP on http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=5)
    uvicorn.Server(config).run(sockets=[sock])


def main(argv: list[str] | None = None) -> int:
    transport = (argv if argv is not None else sys.argv[1:]) or ["stdio"]
    if transport[0] == "http":
        serve_http()
    elif transport[0] == "stdio":
        build().run("stdio")
    else:
        print("usage: python -m benchmarks.mcp_floor {stdio|http}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
