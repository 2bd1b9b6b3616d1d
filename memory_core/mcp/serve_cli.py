"""``agent-memory mcp``: serve the memory tools over stdio (default) or streamable HTTP (``--http``)."""

from __future__ import annotations

import argparse
import socket
import sys

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def add_mcp_command(sub, default_path: str) -> None:
    """Register ``mcp`` on the CLI's subparsers."""
    p = sub.add_parser("mcp", help="serve the memory tools over MCP: stdio (identity from the arguments) or --http (from keys)",
                       description="Serve the five memory tools over the Model Context Protocol (docs/mcp.md). Over "
                       "stdio the identity comes from --agent-id/--user-id/--project; with --http every request needs "
                       "a key (agent-memory keys create) and the identity comes from the key only.")
    p.add_argument("--path", default=default_path, help=f"store file or postgresql:// URL (default {default_path}, or $MEMORY_STORE)")
    p.add_argument("--agent-id", help="stdio: the agent this server acts as")
    p.add_argument("--user-id", help="stdio: the user it acts for")
    p.add_argument("--project", default=None, help="stdio: the project (offers the current_project write target)")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="--http: address to bind (default loopback; anything else is your call)")
    p.add_argument("--port", type=int, default=8765, help="--http: port (0 picks a free one; the URL is printed)")
    ambient = p.add_mutually_exclusive_group()
    ambient.add_argument("--ambient", dest="ambient", action="store_true", default=None,
                         help="put the ambient profile in each session's instructions (default: the ambient.enabled setting)")
    ambient.add_argument("--no-ambient", dest="ambient", action="store_false")
    p.add_argument("--log-level", default="warning", choices=("critical", "error", "warning", "info", "debug"))
    p.set_defaults(fn=cmd_mcp)


def cmd_mcp(args) -> int:
    from ..errors import InvalidInputError

    if args.http:
        if args.agent_id or args.user_id or args.project:
            raise InvalidInputError("--http takes no --agent-id, --user-id or --project: over HTTP the identity comes "
                                    "from each request's key (agent-memory keys create)")
        return _serve_http(args)
    if not args.agent_id or not args.user_id:
        raise InvalidInputError("stdio needs --agent-id and --user-id: the identity comes from the launch configuration")
    return _serve_stdio(args)


def _open(path, pooled: bool = False):
    """The store at ``path`` (``pooled``: a connection pool on PostgreSQL, for the HTTP server); a missing
    store is refused (``agent-memory init`` makes stores), never created."""
    from .. import MemoryService, load_settings
    from ..store.backend import require_store

    require_store(path)
    return MemoryService.open(path, load_settings(), pooled=pooled)


def _serve_stdio(args) -> int:
    import logging

    from ..policy.scopes import validate_id
    from .memory_session import Principal

    validate_id(args.agent_id, "agent_id")
    validate_id(args.user_id, "user_id")
    if args.project is not None:
        validate_id(args.project, "project")
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)  # stdout is the protocol stream
    from .stdio import serve_stdio

    with _open(args.path) as service:
        def ready(memory) -> None:
            print(f"agent-memory MCP on stdio: memory session {memory.id} for agent {args.agent_id}, user {args.user_id}",
                  file=sys.stderr, flush=True)

        run_id = serve_stdio(service, Principal(args.agent_id, args.user_id, args.project), ambient=args.ambient, ready=ready)
    print(f"agent-memory MCP: session ended; extraction run {run_id or 'not queued'}", file=sys.stderr, flush=True)
    return 0


def _serve_http(args) -> int:
    import logging

    import uvicorn

    from ..store.urls import redact_url
    from .http_app import McpHttpApp

    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr, format="%(levelname)s: %(name)s: %(message)s")
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle's algorithm off only on sockets it knows are TCP, and
    # with it on, a response written in two parts waits for the client's delayed ACK (about 40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((args.host, args.port))
    sock.listen(128)
    port = sock.getsockname()[1]
    host = f"[{args.host}]" if ":" in args.host else args.host
    with _open(args.path, pooled=True) as service:  # many sessions at once: a connection pool on PostgreSQL
        app = McpHttpApp(service, loopback_only=args.host in LOOPBACK, ambient=args.ambient)
        app.on_ready = lambda: print(f"agent-memory MCP on http://{host}:{port}/mcp (hooks at /hooks; store "
                                     f"{redact_url(str(args.path))})", file=sys.stderr, flush=True)
        config = uvicorn.Config(app, log_level=args.log_level, access_log=args.log_level in ("info", "debug"),
                                lifespan="on", timeout_graceful_shutdown=5)
        uvicorn.Server(config).run(sockets=[sock])
    return 0


def build_parser() -> argparse.ArgumentParser:  # for tests that parse the command line alone
    parser = argparse.ArgumentParser(prog="agent-memory")
    add_mcp_command(parser.add_subparsers(dest="command", required=True), "var/memory.sqlite")
    return parser
