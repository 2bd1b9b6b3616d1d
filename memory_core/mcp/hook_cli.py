"""``agent-memory hook EVENT``: a host hook (Claude Code's command hooks) reports its conversation.

Reads the hook payload from stdin, reads the transcript it names (the file is on this machine),
and records the event: into a local store (``--path`` with ``--agent-id``/``--user-id``), or
through a running ``agent-memory mcp --http`` server (``--url``, with a **host** key in the
environment variable ``--token-env`` names; a model key is refused there).

Exit status: 0 when recorded; 1 with one line on stderr when refused (nothing is written). Never
2: Claude Code treats exit 2 as "block", which for UserPromptSubmit would throw away the user's
prompt because of a memory problem. Nothing is printed on stdout except, for ``SessionStart``
with ``--context``, the hook output that adds the ambient profile to the model's context.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from .hook_payload import EVENTS, parse_payload_text, read_transcript

DEFAULT_TOKEN_ENV = "AGENT_MEMORY_HOST_KEY"
TIMEOUT_S = 30


def add_hook_command(sub, default_path: str) -> None:
    """Register ``hook`` on the CLI's subparsers."""
    p = sub.add_parser("hook", help="record a host hook event (Claude Code's payload on stdin): transcripts become sessions",
                       description="Record one host hook event read from stdin (docs/mcp.md). Locally with --path, "
                       "--agent-id and --user-id, or through `agent-memory mcp --http` with --url and a host key.")
    p.add_argument("event", choices=EVENTS)
    p.add_argument("--path", default=default_path, help=f"local store (default {default_path}, or $MEMORY_STORE)")
    p.add_argument("--agent-id", help="local: the agent the conversation was with (the one the MCP server runs as)")
    p.add_argument("--user-id", help="local: the user")
    p.add_argument("--project", default=None)
    p.add_argument("--url", default=None, help="remote: the server's base URL, e.g. http://127.0.0.1:8765")
    p.add_argument("--token-env", default=DEFAULT_TOKEN_ENV,
                   help=f"remote: environment variable holding the host key (default {DEFAULT_TOKEN_ENV})")
    p.add_argument("--context", action="store_true",
                   help="SessionStart: add the user's ambient profile to the model's context (hook output)")
    p.add_argument("--extract", action="store_true",
                   help="SessionEnd, local store: run the session's extraction now instead of leaving it to `agent-memory worker`")
    p.set_defaults(fn=cmd_hook)


def cmd_hook(args) -> int:
    """Run one hook call; every failure is one line on stderr and exit 1."""
    from ..errors import MemoryCoreError

    try:
        result = _run(args, sys.stdin.buffer.read())
    except MemoryCoreError as exc:
        print(f"agent-memory hook {args.event}: refused [{exc.code}]: {exc.message}", file=sys.stderr)
        return 1
    except HookTransportError as exc:
        print(f"agent-memory hook {args.event}: {exc}", file=sys.stderr)
        return 1
    context = result.get("additional_context")
    if context:
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}))
    return 0


class HookTransportError(Exception):
    """The remote server could not be reached or refused the event."""


def _run(args, raw: bytes) -> dict[str, Any]:
    from ..errors import InvalidInputError

    event = parse_payload_text(args.event, raw)
    read = read_transcript(event.transcript_path) if event.transcript_path else None
    turns = read.turns if read else []
    lines = read.lines if read else None
    if args.url:
        if args.agent_id or args.user_id or args.project:
            raise InvalidInputError("--url takes no --agent-id, --user-id or --project: the host key names the principal")
        if args.extract:
            raise InvalidInputError("--extract runs extraction in this process, on a local store; with --url the "
                                    "server's `agent-memory worker` runs it")
        return _post(args, {"event": event.event, "payload": json.loads(raw), "turns": [t.to_dict() for t in turns],
                            "transcript_lines": lines, "context": args.context})
    if not args.agent_id or not args.user_id:
        raise InvalidInputError("a local hook needs --agent-id and --user-id (or --url and a host key)")
    from .. import MemoryService, load_settings
    from ..policy.scopes import validate_id
    from ..store.backend import require_store
    from .hook_recorder import HookRecorder
    from .memory_session import Principal

    principal = Principal(validate_id(args.agent_id, "agent_id"), validate_id(args.user_id, "user_id"),
                          validate_id(args.project, "project") if args.project else None)
    require_store(args.path)  # a mistyped --path is refused, not made into a new empty store
    with MemoryService.open(args.path, load_settings()) as service:
        result = HookRecorder(service, principal, context=args.context).record(event, turns, lines)
        if args.extract and result.get("extraction_run_id"):
            result["extraction_status"] = service.run_extraction(result["extraction_run_id"]).status
        return result


def _post(args, body: dict[str, Any]) -> dict[str, Any]:
    import urllib.error  # only the remote path needs them (urllib.request alone costs ~0.1 s to import)
    import urllib.request

    token = os.environ.get(args.token_env)
    if not token:
        raise HookTransportError(f"no host key: set {args.token_env} (agent-memory keys create --kind host ...)")
    request = urllib.request.Request(args.url.rstrip("/") + "/hooks", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310 - the operator's own URL
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            error = json.loads(exc.read()).get("error") or {}
        except (ValueError, AttributeError):
            error = {}
        message = error.get("message") if isinstance(error, dict) else None
        raise HookTransportError(f"the server refused the event (HTTP {exc.code}): {message or exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise HookTransportError(f"could not reach {args.url}: {getattr(exc, 'reason', exc)}") from None
