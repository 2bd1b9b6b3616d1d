"""Shared set-up for the adapter examples: a store, a grant, and a printout of what was remembered."""

from __future__ import annotations

import argparse
import importlib.util
import os
import tempfile
from pathlib import Path

for _name, _value in (("CREWAI_TRACING_ENABLED", "false"), ("CREWAI_DISABLE_TELEMETRY", "true"), ("CREWAI_DISABLE_TRACKING", "true"),
                      ("OTEL_SDK_DISABLED", "true"), ("LANGSMITH_TRACING", "false"), ("ANONYMIZED_TELEMETRY", "false"),
                      ("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false")):
    os.environ.setdefault(_name, _value)

from memory_core import MemoryService, load_settings  # noqa: E402


def arguments(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--live", action="store_true", help="use the Anthropic model (needs ANTHROPIC_API_KEY)")
    parser.add_argument("--mode", default="hybrid", choices=["tool_only", "auto", "hybrid"], help="retrieval trigger mode")
    parser.add_argument("--store", help="SQLite store to use (default: a fresh temporary file)")
    parser.add_argument("--embedder", choices=["minilm", "hashing"],
                        help="minilm (the packaged model; default where torch is installed) or hashing (no torch)")
    args = parser.parse_args()
    if args.live and not os.environ.get("ANTHROPIC_API_KEY"):
        parser.error("--live needs ANTHROPIC_API_KEY in the environment")
    return args


def open_store(args: argparse.Namespace) -> MemoryService:
    """The store, with agent 'assistant' allowed to read and write user:alice."""
    path = Path(args.store) if args.store else Path(tempfile.mkdtemp(prefix="agent-memory-example-")) / "memory.sqlite"
    kind = args.embedder or ("minilm" if importlib.util.find_spec("torch") else "hashing")
    embedder = None
    if kind == "hashing":
        from memory_core.embed.hashing import HashingEmbedder

        embedder = HashingEmbedder()
    service = MemoryService.open(path, load_settings(), embedder=embedder)
    service.grant("assistant", "user:alice", read=True, write=True, actor="example")
    print(f"store: {path}  (embedder: {service.embedder.model_name})")
    return service


def show_memories(service: MemoryService, run_id: str | None) -> None:
    """Run the session's extraction now and print the user's live records."""
    if run_id:
        detail = service.run_extraction(run_id)
        print(f"\nextraction run {run_id}: {detail.status if detail else 'not found'}")
    print("\nwhat the store now holds for user:alice:")
    for row in service.store.query(
        "SELECT type, status, source_kind, content FROM records WHERE scope_kind = 'user' AND scope_id = 'alice' "
        "AND status IN ('confirmed', 'provisional') ORDER BY seq"
    ):
        print(f"  [{row['type']}/{row['status']}/{row['source_kind']}] {row['content']}")
