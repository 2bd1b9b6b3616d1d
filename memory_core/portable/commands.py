"""The ``export`` and ``import`` commands of ``agent-memory`` (added to its parser by ``memory_core.cli``)."""

from __future__ import annotations

import json
import sys


def _progress(label: str):
    def report(done: int, total: int) -> None:
        if done == total or done % 200 == 0:
            print(f"\r{label} {done}/{total}", end="\n" if done == total else "", file=sys.stderr, flush=True)
    return report


def _open(args):
    from ..service.facade import MemoryService
    from ..settings import load_settings

    return MemoryService.open(args.path, load_settings())


def cmd_export(args) -> int:
    """Write the records (and optionally sessions) the caller may read as an export file."""
    from .export import export_to

    with _open(args) as service:
        info = export_to(service, args.out, overwrite=args.force, scopes=args.scope or None, agent_id=args.agent,
                         user_id=args.user, sessions=args.sessions, progress=_progress("exported"))
    print(json.dumps(info))
    return 0


def cmd_import(args) -> int:
    """Import an export file (or mem0's memories) through the write path; one report line per record."""
    with _open(args) as service:
        if args.from_ == "mem0":
            from .mem0 import import_mem0

            report = import_mem0(service, args.file, user_id=args.user, agent_id=args.agent, dry_run=args.dry_run,
                                 progress=_progress("imported"))
        else:
            from .importer import import_file

            report = import_file(service, args.file, agent_id=args.agent, user_id=args.user, dry_run=args.dry_run,
                                 progress=_progress("dry run" if args.dry_run else "imported"))
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        for item in report["lines"]:
            detail = item.get("summary") or f"{item['error']['code']}: {item['error']['message']}"
            print(f"line {item['line']}: {'would ' if args.dry_run else ''}{item['action']} ({' '.join(str(detail).split())})")
        print(json.dumps({"file": report["file"], "dry_run": report["dry_run"], "counts": report["counts"]}))
    return 2 if report["counts"].get("refuse") else 0


def add_portable_commands(sub, default_path: str) -> None:
    """``export`` and ``import`` (docs/export-format.md)."""
    p = sub.add_parser("export", help="write the memory you may read to a portable JSON Lines file (docs/export-format.md)",
                       description="Export records with their versions, entities and aliases (and optionally sessions).")
    p.add_argument("out", help="file to write (refused if it exists, unless --force)")
    p.add_argument("--path", default=default_path, help="store file or postgresql:// URL")
    p.add_argument("--scope", action="append", help="a scope to export (repeat); default every scope the caller may read")
    p.add_argument("--agent", default=None, help="export as this agent (with --user): only what its grants let it read")
    p.add_argument("--user", default=None, help="the user the agent acts for")
    p.add_argument("--sessions", action="store_true", help="also export the sessions and turns the records cite")
    p.add_argument("--force", action="store_true", help="replace an existing file")
    p.set_defaults(fn=cmd_export)
    p = sub.add_parser("import", help="import an export file (or mem0's memories) through the write path",
                       description="Import records through the write path: grants, claim rules and source ranks apply; "
                       "prints one line per record (exit 2 if any was refused).")
    p.add_argument("file")
    p.add_argument("--path", default=default_path, help="store file or postgresql:// URL")
    p.add_argument("--from", dest="from_", choices=("agent-memory", "mem0"), default="agent-memory",
                   help="the file's format (mem0: its get_all JSON or its export)")
    p.add_argument("--agent", default=None, help="import as this agent (with --user): its write grants apply")
    p.add_argument("--user", default=None, help="the user (mem0: the user whose scope the memories land in)")
    p.add_argument("--dry-run", action="store_true", help="report what would be created, reinforced, superseded or refused; write nothing")
    p.add_argument("--json", action="store_true", help="print the whole report as JSON")
    p.set_defaults(fn=cmd_import)
