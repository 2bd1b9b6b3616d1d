"""memory_write latency on warm stores of 1K and 50K records, with a per-stage breakdown.

    .venv/bin/python -m benchmarks.write_bench [--sizes 1000 50000] [--writes 200]

Each store is bulk-loaded with synthetic records (benchmarks/corpus.py), then the real tool path
(``session.call_tool("memory_write", ...)``) is timed with the packaged embedder kept warm. The
mix is a third agent inferences, a third evidenced user statements (quote located in the
transcript and checked for entailment) and a third episodic records.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from memory_core import FixedClock, MemoryService, load_settings  # noqa: E402
from memory_core.store.db import loads  # noqa: E402

from .corpus import OUT, bulk_load, synthetic_texts  # noqa: E402
from .stats import load_average, machine, markdown_table, save, summary  # noqa: E402

STAGES = ["input_validation", "permission_check", "evidence_validation", "content_embedding", "entity_link_resolution", "duplicate_search",
          "contradiction_check", "sqlite_transaction", "event_log_write"]  # the logged stages (the index update is after the commit)


WORKLOAD = synthetic_texts(5000, seed=99)


def workload(i: int) -> tuple[str | None, dict]:
    """A varied mix so most writes create records (near-duplicates would only reinforce)."""
    kind, text, attribute = WORKLOAD[i % len(WORKLOAD)]
    text = text.replace("(note", "(entry")
    if kind == "episodic":
        return None, {"type": "episodic", "content": text, "event_at": "2026-02-14"}
    if i % 2 == 0:
        quote = "I told you: " + text.replace("The user", "I").replace("the user's", "my").replace("user's", "my")
        return quote, {"type": "semantic", "content": text, "attribute": attribute, "source_kind": "user_statement", "evidence": quote}
    return None, {"type": kind, "content": text, "attribute": attribute}


def run(size: int, writes: int, torch_reference) -> dict:
    path = OUT / f"write-{size}.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"))
    load = bulk_load(service, size, progress=lambda d, t: print(f"\r  loading {d}/{t}", end="", flush=True))
    print()
    service.grant("bench", "user:user0", read=True, write=True, actor="bench")
    session = service.start_session(agent_id="bench", user_id="user0")
    for i in range(10):  # warm-up: model, caches, statement cache
        quote, args = workload(100_000 + i)
        if quote:
            session.record_turn("user", quote)
        session.call_tool("memory_write", args)
    first_log = service.store.scalar("SELECT MAX(seq) FROM write_log")
    load_before = load_average()
    wall, bare, outcomes = [], [], {}
    for i in range(writes):
        quote, args = workload(i)
        if quote:
            session.record_turn("user", quote)
        # The reference: one bare embedding of the same text, timed right before the write, so
        # the ratio holds under whatever load the machine has at that moment.
        began = time.perf_counter()
        service.embedder.embed([args["content"]])
        bare.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        result = session.call_tool("memory_write", args)
        wall.append((time.perf_counter() - began) * 1000)
        assert result["ok"], result
        outcomes[result["outcome"]] = outcomes.get(result["outcome"], 0) + 1
    rows = service.store.query("SELECT stages FROM write_log WHERE seq > ? ORDER BY seq", (first_log,))
    logged = [loads(r["stages"]) for r in rows]
    # Stages a write skipped (e.g. the contradiction check of a reinforcement) are left out, not counted as 0.
    stages = {name: summary([s[name] for s in logged if name in s]) for name in STAGES}
    load_after = load_average()
    # The reference, same run: a bare sentence-transformers (torch, one thread) embedding of the same contents.
    reference = []
    for i in range(min(writes, 100)):
        text = workload(i)[1]["content"]
        began = time.perf_counter()
        torch_reference.embed([text])
        reference.append((time.perf_counter() - began) * 1000)
    records = service.stats()["records"]
    service.close()
    return {"records_before": size, "records_after": records, "writes": writes, "outcomes": outcomes, "total_ms": summary(wall),
            "stages_ms": stages, "load": load, "load_average": [load_before[0], load_after[0]],
            "torch_embedding_ms": summary(reference), "ratio_p50_to_torch_embedding": round(summary(wall)["p50"] / summary(reference)["p50"], 3),
            "configured_embedding_ms": summary(bare),
            "ratio_p50_to_configured_embedding": round(summary(wall)["p50"] / summary(bare)["p50"], 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 50000])
    parser.add_argument("--writes", type=int, default=200)
    args = parser.parse_args()
    from memory_core.service import shared_embedder

    from memory_core.embed.sentence import SentenceTransformerEmbedder

    settings = load_settings()
    embedder = shared_embedder(settings.embedder)
    import torch

    torch.set_num_threads(settings.embedder.torch_threads or 1)
    torch_reference = SentenceTransformerEmbedder(max_seq_length=settings.embedder.max_seq_length)
    results = {"benchmark": "memory_write", "warm": True, "model": embedder.model_name, "model_version": embedder.model_version,
               "runtime": getattr(embedder, "runtime", "torch"), "judge": "offline", "machine": machine(), "runs": []}
    for size in args.sizes:
        print(f"store of {size} records")
        results["runs"].append(run(size, args.writes, torch_reference))
    header = ["store", "writes (created/reinforced)", "load (1 min) before/after", "p50 ms", "p95 ms", "mean ms",
              "torch embedding p50 (reference)", "p50 / torch embedding"] + [s.replace("_", " ") + " p50" for s in STAGES]
    table = [[r["records_before"], f"{r['writes']} ({r['outcomes'].get('created', 0)}/{r['outcomes'].get('reinforced', 0)})",
              f"{r['load_average'][0]} / {r['load_average'][1]}", r["total_ms"]["p50"], r["total_ms"]["p95"], r["total_ms"]["mean"],
              r["torch_embedding_ms"]["p50"], r["ratio_p50_to_torch_embedding"]]
             + [r["stages_ms"][s].get("p50", "-") for s in STAGES] for r in results["runs"]]
    markdown = (f"memory_write, warm, {results['model']} ({results['model_version']}) on {results['runtime']}, offline "
                f"entailment judge, {results['machine']['cpus']} CPUs shared with other work, one embedding thread. Reproduce: "
                "`OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.write_bench`.\n\n" + markdown_table(header, table))
    save("write", results, markdown)
    print(json.dumps(results, indent=2))
    print(markdown)


if __name__ == "__main__":
    main()
