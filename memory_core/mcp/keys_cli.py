"""``agent-memory keys create|list|revoke``: API keys of the MCP HTTP server (docs/mcp.md)."""

from __future__ import annotations

import json


def add_keys_command(sub, default_path: str) -> None:
    """Register ``keys`` and its subcommands on the CLI's subparsers."""
    keys = sub.add_parser("keys", help="create, list or revoke API keys of the MCP HTTP server",
                          description="API keys of `agent-memory mcp --http`. A model key opens MCP sessions; a host "
                          "key reports transcripts through hooks. Tokens are stored hashed and shown once.")
    ksub = keys.add_subparsers(dest="keys_command", required=True)
    create = ksub.add_parser("create", help="create a key; its token is the last line printed (shown once)")
    create.add_argument("--agent-id", required=True)
    create.add_argument("--user-id", required=True)
    create.add_argument("--project", default=None)
    create.add_argument("--kind", choices=("model", "host"), default="model",
                        help="model: MCP sessions (default); host: hook events with transcripts")
    create.add_argument("--label", default=None, help="a note for the key list (e.g. 'laptop, Claude Code')")
    create.add_argument("--actor", default="cli")
    create.set_defaults(fn=cmd_keys_create)
    show = ksub.add_parser("list", help="list keys with their principal, last use and revocation (never tokens)")
    show.add_argument("--json", action="store_true")
    show.add_argument("--live", action="store_true", help="leave out revoked keys")
    show.set_defaults(fn=cmd_keys_list)
    revoke = ksub.add_parser("revoke", help="revoke a key now: its token gets 401 from then on")
    revoke.add_argument("key_id")
    revoke.add_argument("--reason", default=None)
    revoke.add_argument("--actor", default="cli")
    revoke.set_defaults(fn=cmd_keys_revoke)
    for parser in (create, show, revoke):
        parser.add_argument("--path", default=default_path, help=f"store file or postgresql:// URL (default {default_path})")


def _open(args):
    """The store at ``--path``; a missing one is refused (``agent-memory init`` makes stores), never created."""
    from .. import MemoryService, load_settings
    from ..store.backend import require_store

    require_store(args.path)
    return MemoryService.open(args.path, load_settings())


def cmd_keys_create(args) -> int:
    from .keys import create_key

    with _open(args) as service:
        row, token = create_key(service, kind=args.kind, agent_id=args.agent_id, user_id=args.user_id,
                                project_id=args.project, label=args.label, actor=args.actor)
        access = service.access(args.agent_id, args.user_id)
        personal = f"user:{args.user_id}"
        project = f", project {row['project_id']}" if row["project_id"] else ""
        print(f"created {row['kind']} key {row['id']} for agent {row['agent_id']}, user {row['user_id']}{project} "
              f"({row['created_at']})")
        if row["kind"] == "model" and not access.can_write(personal):
            print(f"note: agent {args.agent_id} cannot write {personal} yet; grant it with "
                  f"`agent-memory grant {args.agent_id} {personal} --write`")
        print("The token below is shown once and stored only as a hash; keep it in your MCP client's configuration.")
        print(token)
    return 0


def cmd_keys_list(args) -> int:
    from .keys import list_keys

    with _open(args) as service:
        rows = list_keys(service, include_revoked=not args.live)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no keys yet: agent-memory keys create --agent-id A --user-id U")
        return 0
    for row in rows:
        state = f"revoked {row['revoked_at']} by {row['revoked_by']}" if row["revoked_at"] else "live"
        project = f" project {row['project_id']}" if row["project_id"] else ""
        label = f"  ({row['label']})" if row["label"] else ""
        print(f"{row['id']}  {row['kind']:<5}  {row['agent_id']}/{row['user_id']}{project}  created {row['created_at']}  "
              f"last used {row['last_used_at'] or 'never'}  {state}{label}")
    return 0


def cmd_keys_revoke(args) -> int:
    from .keys import revoke_key

    with _open(args) as service:
        row = revoke_key(service, args.key_id, actor=args.actor, reason=args.reason)
    print(f"revoked key {row['id']} ({row['kind']}, {row['agent_id']}/{row['user_id']}) at {row['revoked_at']}")
    return 0
