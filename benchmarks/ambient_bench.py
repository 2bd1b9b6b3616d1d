"""What the ambient profile costs: assembling it at session start, and serving it on each model call.

    nice -n 10 .venv/bin/python -m benchmarks.ambient_bench [--records 2000] [--reps 200]

One user's store holds ``--records`` records: 12 trusted response-shaping preferences, a few
candidates, and filler facts (the common case: most of a user's memory is conditional). Timed in
one run: ``assemble_profile`` (what an adapter runs once per session), the recorded-prefix read
``MemoryRuntime.prefix`` (what it runs on every model call), and, as the reference, one
``memory_search`` through the tool path. The hashing embedder keeps the model out of the figures.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from memory_core import FixedClock, MemoryService
from memory_core.adapters.base import MemoryRuntime
from memory_core.adapters.identity import Identity
from memory_core.embed.hashing import HashingEmbedder
from memory_core.settings import default_settings

from .stats import machine, markdown_table, save, summary

PREFS = [("language", "The user wants answers in French."), ("preferred_name", "The user wants to be called Ali."),
         ("pronouns", "The user's pronouns are she and her."), ("accessibility_needs", "The user uses a screen reader."),
         ("answer_style", "The user prefers concise answers with code first."), ("tone", "The user likes a dry tone."),
         ("verbosity", "The user wants no filler."), ("format_preference", "The user wants plain text, no tables."),
         ("units", "The user wants metric units."), ("date_format", "The user writes dates as YYYY-MM-DD."),
         ("time_format", "The user uses a 24-hour clock."), ("currency_preference", "The user thinks in euros.")]


def build(path: str, records: int) -> MemoryService:
    service = MemoryService.open(path, default_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="bench")
    for attribute, content in PREFS:
        service.write_system_fact(scope="user:alice", content=content, attribute=attribute, actor="bench")
    writer = service.start_session(agent_id="assistant", user_id="alice", session_id="bench-writer")
    for i in range(5):
        writer.record_turn("tool", f"profile_lookup: reply_language_{i} Portuguese")
        writer.call_tool("memory_write", {"type": "semantic", "content": f"The user may like Portuguese replies {i}.",
                                          "attribute": "reply_style", "source_kind": "tool_result",
                                          "evidence": f"reply_language_{i} Portuguese"})
    for i in range(records - len(PREFS) - 5):
        service.write_system_fact(scope="user:alice", content=f"Fact number {i}: the user's item {i} is stored in box {i * 7}.",
                                  attribute=f"item_{i}", actor="bench")
    return service


def timed(fn, reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        began = time.perf_counter()
        fn()
        out.append((time.perf_counter() - began) * 1000.0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        service = build(os.path.join(tmp, "bench.sqlite"), args.records)
        runtime = MemoryRuntime(service, framework="bench", ambient=True)
        session = runtime.open(Identity(agent_id="assistant", user_id="alice", session_id="bench-session"))
        items = len(service.session_context(session.id)["profile_items"])
        searcher = service.start_session(agent_id="assistant", user_id="alice", session_id="bench-search")
        search = timed(lambda: searcher.call_tool("memory_search", {"query": "which box holds item 42"}), args.reps)
        assemble = timed(lambda: service.ambient_profile("assistant", "alice"), args.reps)
        serve = timed(lambda: runtime.prefix(session), args.reps * 10)
        service.close()
    load_end = os.getloadavg()[0]
    rows = {"memory_search (reference)": summary(search), "assemble profile (session start)": summary(assemble),
            "serve recorded prefix (each model call)": summary(serve)}
    ref = rows["memory_search (reference)"]["p50"]
    data = {"records": args.records, "profile_items": items, "reps": args.reps, "load_start": load_start,
            "load_end": load_end, "machine": machine(), "ms": rows,
            "ratio_to_search_p50": {k: round(v["p50"] / ref, 3) for k, v in rows.items()}}
    table = markdown_table(["operation", "n", "p50 ms", "p95 ms", "p50 / memory_search p50"],
                           [[k, v["n"], v["p50"], v["p95"], data["ratio_to_search_p50"][k]] for k, v in rows.items()])
    markdown = (f"Ambient profile cost: {args.records} records of one user, {items} profile items, hashing embedder; "
                f"load average {load_start:.2f} at the start, {load_end:.2f} at the end "
                f"(`nice -n 10 .venv/bin/python -m benchmarks.ambient_bench`).\n\n{table}")
    save("ambient", data, markdown)
    print(markdown)


if __name__ == "__main__":
    main()
