"""``agent-memory fitness run|show``: record and list host-memory fitness results for a store."""

from __future__ import annotations

import argparse
import json


def add_arguments(parser: argparse.ArgumentParser, default_path: str) -> None:
    """The ``fitness`` command's own subcommands."""
    sub = parser.add_subparsers(dest="fitness_command", required=True)
    run = sub.add_parser("run", help="play the fitness bundle with this store's settings and embedder; record the result",
                         description="Play the host-memory fitness bundle with the configured settings, embedder and "
                         "decider in a throwaway store and record the result in this store (docs/host-memory.md).")
    run.add_argument("--path", default=default_path, help="store that records the result (and will serve host memory)")
    run.add_argument("--bundle", default=None, help="bundle file (default seed_data/host_memory_fitness/bundle.json)")
    run.add_argument("--actor", default="cli")
    run.add_argument("--json", action="store_true", help="print the whole result as JSON")
    run.set_defaults(fn=cmd_fitness_run)
    show = sub.add_parser("show", help="list recorded fitness results and whether host memory may be enabled now")
    show.add_argument("--path", default=default_path)
    show.add_argument("--limit", type=int, default=10)
    show.set_defaults(fn=cmd_fitness_show)


def _open(args, *, read_only: bool = False):
    from ..store.backend import require_store
    from ..service import MemoryService
    from ..settings import load_settings

    require_store(args.path)  # neither run nor show creates a store at a mistyped path
    return MemoryService.open(args.path, load_settings(), read_only=read_only)


def cmd_fitness_run(args) -> int:
    from .fitness import run_fitness

    with _open(args) as service:
        result = run_fitness(service, bundle_path=args.bundle, actor=args.actor)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(f"fitness {'PASSED' if result.passed else 'FAILED'}: bundle {result.bundle_version}, decider {result.decider}, "
              f"embedder {result.embed_model} {result.embed_version} (result {result.id}, fingerprint {result.fingerprint[:12]})")
        for name, m in result.splits.items():
            print(f"  {name:<8} ordinary injection {m['ordinary_injection_rate']:.3f} ({m['ordinary_injected']}/{m['ordinary']}), "
                  f"conditional recall {m['conditional_recall']:.3f} ({m['conditional_hits']}/{m['conditional']}), "
                  f"safety violations {m['safety_violations']}, wrong admissions {m['wrong_admissions']}")
        for failure in result.failures:
            print(f"  failed: {failure}")
    return 0 if result.passed else 1


def cmd_fitness_show(args) -> int:
    from ..errors import HostMemoryNotQualifiedError
    from .fitness import fitness_results, require_fitness

    with _open(args, read_only=True) as service:  # show only looks: it never creates or migrates a store
        for row in fitness_results(service, args.limit):
            print(f"{row['at']}  {'pass' if row['passed'] else 'FAIL'}  {row['bundle_version']}  {row['decider']}  "
                  f"{row['embed_model']}  {row['fingerprint'][:12]}  {row['id']}")
        try:
            row = require_fitness(service)
            print(f"host memory may be enabled with the current settings (passing result {row['id']})")
        except HostMemoryNotQualifiedError as exc:
            print(f"host memory may not be enabled now: {exc.message}")
    return 0
