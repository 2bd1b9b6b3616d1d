"""The ``agent-memory`` command line: manage a store without writing Python or SQL."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DEFAULT_PATH = os.environ.get("MEMORY_STORE", "var/memory.sqlite")


def _open(args, *, create: bool = False, **kwargs):
    """The service on ``args.path``. Only ``init`` (``create=True``) may make a new store: every other
    command refuses a missing or empty file, or a database holding no store (StoreUnusableError)."""
    from memory_core import MemoryService, load_settings
    from memory_core.store.backend import require_store

    if not create:
        require_store(args.path)
    return MemoryService.open(args.path, load_settings(), **kwargs)


def cmd_init(args) -> int:
    with _open(args, create=True) as service:
        stats = service.stats()
    from memory_core.store.urls import redact_url

    print(f"store ready at {redact_url(str(args.path))} (embedder {stats['embedder']['model']}, {stats['records']} records)")
    return 0


def cmd_stats(args) -> int:
    from memory_core import MemoryService, load_settings

    # read-only: stats never creates or migrates a store (a missing or empty file is an error)
    with MemoryService.open(args.path, load_settings(), read_only=True) as service:
        print(json.dumps(service.stats(), indent=2))
    return 0


def cmd_grant(args) -> int:
    with _open(args) as service:
        result = service.grant(args.agent, args.scope, read=not args.no_read, write=args.write, actor=args.actor, reason=args.reason)
    print(json.dumps(result))
    return 0


def cmd_revoke(args) -> int:
    with _open(args) as service:
        service.revoke(args.agent, args.scope, actor=args.actor, reason=args.reason)
    print(f"revoked {args.agent} on {args.scope}")
    return 0


def cmd_grants(args) -> int:
    from memory_core.policy.grants import list_grants

    store = _open_store(args, read_only=True)
    try:
        rows = list_grants(store, args.agent)
    finally:
        store.close()
    for row in rows:
        mode = ("r" if row["can_read"] else "-") + ("w" if row["can_write"] else "-")
        print(f"{row['agent_id']:<24} {mode}  {row['scope']}")
    return 0


def cmd_reembed(args) -> int:
    with _open(args, allow_embedder_mismatch=True) as service:
        def progress(done: int, total: int) -> None:
            print(f"\rre-embedded {done}/{total}", end="", file=sys.stderr, flush=True)

        count = service.reembed(actor=args.actor, progress=progress)
    print(f"\nre-embedded {count} records; re-run gate calibration for the new model (docs/calibration.md)")
    return 0


def cmd_prepare_embedder(args) -> int:
    """Make (or verify) the ONNX file of the configured MiniLM now, so no process pays for it later."""
    from memory_core import load_settings
    from memory_core.embed import embedder_runtime
    from memory_core.embed.onnx import OnnxMiniLMEmbedder

    settings = load_settings().embedder
    # The SHA-256 of a cached file is checked here (every process start checks size and mtime only).
    embedder = OnnxMiniLMEmbedder(settings.model_path, cache_dir=settings.onnx_cache_dir, threads=settings.onnx_threads,
                                  max_seq_length=settings.max_seq_length, verify_hash=True)
    info = getattr(embedder, "export_info", {})
    print(json.dumps({"runtime": embedder_runtime(embedder), "model": embedder.model_name, "version": embedder.model_version,
                      "onnx_file": str(getattr(embedder, "onnx_path", "")) or None, "check": info.get("check")}, indent=1))
    return 0


def cmd_seed_demo(args) -> int:
    from memory_core.demo import build_demo_store

    from memory_core.store.urls import file_path

    path = file_path(args.path, what="the demo store file to build")
    build_demo_store(path, force=args.force, progress=lambda msg: print(msg, file=sys.stderr, flush=True))
    print(f"demo store built at {path}")
    return 0


def cmd_serve(args) -> int:
    from memory_core.app_launch import serve

    return serve(store=args.path, port=args.port, demo=args.demo, host=args.host)


def cmd_worker(args) -> int:
    from memory_core.extract.worker import run_worker

    with _open(args) as service:
        return run_worker(service.extraction, once=args.once, worker_id=args.worker_id)


def cmd_calibrate(args) -> int:
    from memory_core.eval.calibrate_cli import run

    return run(args)


def _open_store(args, *, read_only: bool = False):
    # restore, doctor, grants and prune-logs need no embedding model: open the store alone. None of
    # them creates a store: a missing, empty or damaged file is an error (StoreUnusableError).
    from memory_core.clock import SystemClock, format_ts
    from memory_core.store.backend import is_postgres_url, open_store, require_store

    if not read_only or not is_postgres_url(args.path):  # a read-only open of a database checks itself
        require_store(args.path)
    return open_store(args.path, format_ts(SystemClock().now()), read_only=read_only)


def cmd_backup(args) -> int:
    from memory_core.store.backup import backup_store

    info = backup_store(args.path, args.destination, overwrite=args.force)
    print(json.dumps(info.to_dict()))
    return 0


def cmd_restore(args) -> int:
    """Check the backup, say what the store holds and would be replaced by, then (with --yes) restore."""
    from memory_core.errors import StoreUnusableError
    from memory_core.store.backup import (refuse_postgres, check_backup, describe_counts, refuse_empty, restore_file,
                                          restore_into, store_counts)
    from memory_core.store.opening import damage_guard

    refuse_postgres(args.path)
    info = check_backup(args.backup)  # the whole check comes before anything is touched
    refuse_empty(info, args.allow_empty)
    counts, problem = None, None
    try:
        current = _open_store(args, read_only=True)
    except StoreUnusableError as exc:
        if exc.problem in ("not_a_store", "unreadable"):
            raise  # another program's database, a directory: never overwritten by a restore
        problem = exc
    else:
        try:
            with damage_guard(current.path):
                counts = store_counts(current)
        except StoreUnusableError as exc:
            problem = exc
        finally:
            current.close()
    if counts is not None:
        print(f"the store {args.path} now holds {describe_counts(counts)}; all of it is replaced", file=sys.stderr)
    else:
        print(f"the store {args.path} cannot be read ({problem.problem}): {problem.message}", file=sys.stderr)
    print(f"the backup {args.backup} holds {describe_counts(info.counts)}", file=sys.stderr)
    if not args.yes:
        print(f"refusing to replace {args.path} without --yes (every record written since the backup is lost)", file=sys.stderr)
        return 2
    kept = None
    if counts is not None:
        store = _open_store(args)
        try:
            info = restore_into(store, args.backup, allow_empty=args.allow_empty)
        finally:
            store.close()
    else:
        info, kept = restore_file(args.path, args.backup, allow_empty=args.allow_empty)
    print(json.dumps({"restored_from": info.to_dict(), "store": args.path, "replaced": counts,
                      "kept_unreadable_file": str(kept) if kept else None}))
    return 0


def cmd_doctor(args) -> int:
    from memory_core import load_settings
    from memory_core.store.doctor import doctor_target

    report = doctor_target(args.path, load_settings())  # read-only: reports, never creates or repairs
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.text())
    failed = not report.ok or (args.strict and report.problems)
    return 1 if failed else 0


def cmd_prune_logs(args) -> int:
    from memory_core import load_settings
    from memory_core.clock import SystemClock
    from memory_core.store.retention import prune_logs

    store = _open_store(args)
    try:
        report = prune_logs(store, load_settings().housekeeping, SystemClock().now(), actor=args.actor)
    finally:
        store.close()
    print(json.dumps(report.to_dict()))
    return 0


def cmd_migrate_store(args) -> int:
    """Copy SRC (read from one snapshot) into the empty store DST (SQLite file or postgresql:// URL,
    either way) and verify it before it commits."""
    from memory_core.clock import SystemClock, format_ts
    from memory_core.store.transfer import migrate_store

    def progress(table: str, rows: int) -> None:
        print(f"copied {table}: {rows} rows", file=sys.stderr, flush=True)

    report = migrate_store(args.source, args.destination, format_ts(SystemClock().now()), progress=progress)
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.text())
    return 0 if report.ok else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-memory", description="Manage an agent-memory store.")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, fn, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--path", default=DEFAULT_PATH, help=f"store file or postgresql:// URL (default {DEFAULT_PATH}, or $MEMORY_STORE)")
        p.set_defaults(fn=fn)
        return p

    command("init", cmd_init, "create or migrate a store")
    command("stats", cmd_stats, "print store counts as JSON (read-only)")
    p = command("grant", cmd_grant, "give an agent read (and optionally write) access to a scope")
    p.add_argument("agent")
    p.add_argument("scope", help="user:<id>, project:<id>, org:<id> or agent:<id>")
    p.add_argument("--write", action="store_true", help="also allow writes")
    p.add_argument("--no-read", action="store_true", help="write-only grant")
    p.add_argument("--actor", default="cli")
    p.add_argument("--reason", default=None)
    p = command("revoke", cmd_revoke, "remove an agent's grant on a scope")
    p.add_argument("agent")
    p.add_argument("scope")
    p.add_argument("--actor", default="cli")
    p.add_argument("--reason", default=None)
    p = command("grants", cmd_grants, "list grants")
    p.add_argument("--agent", default=None)
    p = command("reembed", cmd_reembed, "re-embed every record with the configured embedder (explicit migration)")
    p.add_argument("--actor", default="cli")
    p = sub.add_parser("prepare-embedder", help="make and check the ONNX file of the packaged MiniLM (install step)",
                       description="Export the packaged MiniLM to ONNX, check it against the torch vectors and cache it.")
    p.set_defaults(fn=cmd_prepare_embedder)
    p = command("seed-demo", cmd_seed_demo, "build the demo store from seed_data/ through the real write paths")
    p.add_argument("--force", action="store_true", help="replace an existing file")
    p = command("serve", cmd_serve, "run the admin app on a store")
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--demo", action="store_true", help="sign in a demo operator automatically (localhost only)")
    p = command("worker", cmd_worker, "run extraction, review-due and expiry passes")
    p.add_argument("--once", action="store_true", help="one pass, then exit")
    p.add_argument("--worker-id", default=None)
    p = command("backup", cmd_backup, "write a consistent copy of the store while agents keep using it")
    p.add_argument("destination", help="file to write (refused if it exists, unless --force)")
    p.add_argument("--force", action="store_true", help="replace an existing destination file")
    p = command("restore", cmd_restore, "replace the store's content with a backup (checked first)")
    p.add_argument("backup", help="a file written by agent-memory backup")
    p.add_argument("--yes", action="store_true", help="confirm: everything written since the backup is lost")
    p.add_argument("--allow-empty", action="store_true", help="accept a backup that holds no records (the store ends up empty)")
    p = command("doctor", cmd_doctor, "check integrity, FTS, vectors, change feed, orphans and log sizes (read-only); exit 1 on problems")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--strict", action="store_true", help="also exit 1 on warnings")
    p = command("prune-logs", cmd_prune_logs, "apply the log retention settings now (the worker does this periodically)")
    p.add_argument("--actor", default="cli")
    p = sub.add_parser("migrate-store", help="copy a whole store to another backend (SQLite <-> PostgreSQL) and verify it",
                       description="Copy every record, embedding, entity, grant, session, turn and log from SOURCE into "
                       "the empty store DESTINATION (a file path or a postgresql:// URL), then print row counts and "
                       "checksums per table; exit 1 if any differ.")
    p.add_argument("source")
    p.add_argument("destination")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(fn=cmd_migrate_store)
    p = sub.add_parser("calibrate", help="re-derive the gate floors for the configured embedder on a scratch LoCoMo store",
                       description="Re-derive the gate floors (docs/calibration.md); never touches a real store.")
    from memory_core.eval.calibrate_cli import add_arguments

    add_arguments(p)
    p.set_defaults(fn=cmd_calibrate)
    from memory_core.hostmem.fitness_cli import add_arguments as add_fitness_arguments

    add_fitness_arguments(sub.add_parser("fitness", help="record or list host-memory fitness results (docs/host-memory.md)"),
                          DEFAULT_PATH)
    from memory_core.mcp import hook_cli, keys_cli, serve_cli  # the MCP server, its keys, host hooks (docs/mcp.md)

    for add in (serve_cli.add_mcp_command, keys_cli.add_keys_command, hook_cli.add_hook_command):
        add(sub, DEFAULT_PATH)
    from memory_core.portable.commands import add_portable_commands  # export and import (docs/export-format.md)

    add_portable_commands(sub, DEFAULT_PATH)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; every failure ends in one line on stderr, never a traceback.

    Exit codes: 0 done; 1 the store is unusable (missing, empty, damaged...), a check failed or
    the database or a file could not be used; 2 a refused request (bad input, no --yes).
    """
    import sqlite3

    from memory_core.errors import MemoryCoreError, StoreUnusableError

    args = build_parser().parse_args(argv)
    try:
        return int(args.fn(args) or 0)
    except StoreUnusableError as exc:
        print(f"error [{exc.code}]: {_one_line(exc.message)}", file=sys.stderr)
        return 1
    except MemoryCoreError as exc:
        print(f"error [{exc.code}]: {_one_line(exc.message)}", file=sys.stderr)
        return 2
    except sqlite3.Error as exc:  # the database refused (PostgreSQL's errors arrive as these too)
        print(f"error [database]: {_one_line(str(exc))}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error [file]: {_one_line(str(exc))}", file=sys.stderr)
        return 1


def _one_line(text: str) -> str:
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
