"""The reranker stage's cost: by candidate count (10, 30, 100), and memory_search with the stage on.

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python -m benchmarks.rerank_bench
        [--counts 10 30 100] [--reps 5] [--sizes 1000 50000] [--searches 10]

**The model has random weights**: bge-reranker-v2-m3's architecture and size, built from its
configuration (:mod:`benchmarks.reranker_stand_in`, which also says how its tokenizer stands in for
XLM-R's and why the token counts are reported). It is loaded through the repo's own loader
(``retrieval.reranker_model_path`` → ``rerank.build_reranker`` → FlagEmbedding's ``FlagReranker``), so
the stage runs exactly as it would with the real weights. Times only: the scores mean nothing, and
no quality number comes from this script.

1. **Stage cost by candidate count.** For each of ``--reps`` benchmark queries, the texts of its
   ``n`` nearest records (the 50K store's dense top ``n``: real candidate texts, hence realistic
   lengths) are scored by the loaded scorer, ``scorer.score(query, texts)`` (what ``RerankStage``
   calls on its worker thread). Reported: p50/p95, tokens per pair (mean, max) and per call as the
   stand-in tokenizer counts them, and one bare forward pass over the same padded batches (the same
   model called directly): FlagEmbedding first runs a trial batch to probe the batch size, then
   scores every batch, so a call of up to 128 pairs pays the forward pass twice.
2. **memory_search with the stage on**, at 1K and 50K records (the search benchmark's stores, its
   query mix and principal), ``reranker_mode`` ``after_floors`` (the default placement), its
   ``reranker_timeout_s`` raised to 600 s so the stage finishes and its full cost is seen; the
   rerank stage's time and how many candidates it reranked come from each search's trace. The same
   queries with the stage off are the same-run reference. A few more searches with the shipped 2 s
   timeout show what the stage does on this machine as configured (fall back to the fused order).

Torch threads: the library does not set them for the reranker; the count in use is reported.
Writes benchmarks/out/rerank_bench.{json,md}.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from memory_core import FixedClock, MemoryService, load_settings  # noqa: E402
from memory_core.retrieve.rerank import build_reranker  # noqa: E402

from . import reranker_stand_in, search_bench, search_corpus  # noqa: E402
from .stats import load_average, machine, markdown_table, save, summary  # noqa: E402

CLOCK = "2026-03-05T10:00:00Z"
OUT = Path(__file__).resolve().parent / "out"
CAPTION = ("RANDOM WEIGHTS: a model of bge-reranker-v2-m3's architecture and size (XLM-RoBERTa large, 568M parameters, "
           "one label) with random weights, loaded through the repo's reranker loader; tokenizer: the packaged MiniLM WordPiece "
           "with its ids folded into the 250,002-id vocabulary and XLM-R's special tokens (token counts below are that "
           "tokenizer's); times only, no quality number.")


def candidate_texts(service, query: str, n: int) -> list[str]:
    """The contents of the principal's ``n`` nearest records to ``query`` (dense, exact)."""
    vector = service.embedder.embed([query])[0]
    mask = service.index.mask(["user:u0", "project:shared"], ("provisional", "confirmed"))
    seqs = [seq for seq, _ in service.index.search(vector, n, mask)]
    rows = service.store.query(f"SELECT seq, content FROM records WHERE seq IN ({','.join('?' * len(seqs))})", seqs)
    by_seq = {r["seq"]: r["content"] for r in rows}
    return [by_seq[s] for s in seqs]


def pair_batches(scorer, query: str, texts: list[str]):
    """The padded batches FlagEmbedding builds for these pairs, and the tokens of each pair."""
    from FlagEmbedding.utils.tokenizer_compat import pad_with_compat, prepare_for_model_compat

    flag = scorer._model
    tok = flag.tokenizer
    q = tok([query], add_special_tokens=False, truncation=True, max_length=flag.max_length * 3 // 4)["input_ids"][0]
    items = []
    for text in texts:
        d = tok([text], add_special_tokens=False, truncation=True, max_length=flag.max_length)["input_ids"][0]
        items.append(prepare_for_model_compat(tok, q, d, truncation="only_second", max_length=flag.max_length, padding=False))
    items.sort(key=lambda x: -len(x["input_ids"]))
    lengths = [len(x["input_ids"]) for x in items]
    batches = [pad_with_compat(tok, items[i:i + flag.batch_size], padding=True, return_tensors="pt")
               for i in range(0, len(items), flag.batch_size)]
    return batches, lengths


def stage_by_count(scorer, service, counts: list[int], reps: int) -> list[dict]:
    import torch

    queries = [q for q in search_corpus.queries(reps * 3) if not q.startswith(tuple(search_corpus.OFF_TOPIC))][:reps]
    rows = []
    for n in counts:
        calls, bare, tokens, per_call = [], [], [], []
        for query in queries:
            texts = candidate_texts(service, query, n)
            scorer.score(query, texts[:2])  # warm the code path (the model is loaded)
            began = time.perf_counter()
            scores = scorer.score(query, texts)
            calls.append((time.perf_counter() - began) * 1000.0)
            assert len(scores) == len(texts)
            batches, lengths = pair_batches(scorer, query, texts)
            tokens += lengths
            per_call.append(sum(lengths))
            began = time.perf_counter()
            with torch.no_grad():
                for batch in batches:
                    scorer._model.model(**batch, return_dict=True)
            bare.append((time.perf_counter() - began) * 1000.0)
        rows.append({"candidates": n, "score_call_ms": summary(calls), "one_forward_pass_ms": summary(bare),
                     "tokens_per_pair": {"mean": round(float(np.mean(tokens)), 1), "max": int(max(tokens))},
                     "tokens_per_call_mean": round(float(np.mean(per_call)), 1), "load_average": load_average()})
        print(f"  {n} candidates: score p50 {rows[-1]['score_call_ms']['p50']} ms", flush=True)
    return rows


def searches_with_stage(size: int, model_dir: Path, searches: int, timeout_runs: int) -> dict:
    queries = search_corpus.queries(searches + 5)
    base = {"query_cache_size": 0, "reranker_model_path": str(model_dir)}
    out = {"records": size, "load_average_before": load_average()}
    on = load_settings(retrieval={**base, "reranker_enabled": True, "reranker_timeout_s": 600.0})
    with MemoryService.open(search_bench.store_path(size), on, clock=FixedClock(CLOCK)) as service:
        began = time.perf_counter()
        service.retriever.reranker(service.settings.retrieval)  # the model load, once, through the product's loader
        out["model_load_s"] = round(time.perf_counter() - began, 1)
        for query in queries[:2]:
            service.search(agent_id="bench", user_id="u0", query=query)
        runs = {"off": [], "on": [], "stage": [], "candidates": [], "status": {}}
        for query in queries[5:5 + searches]:
            began = time.perf_counter()
            service.search(agent_id="bench", user_id="u0", query=query, rerank=False)
            runs["off"].append((time.perf_counter() - began) * 1000.0)
            began = time.perf_counter()
            response = service.search(agent_id="bench", user_id="u0", query=query)
            runs["on"].append((time.perf_counter() - began) * 1000.0)
            stage = response.trace.stage("rerank")
            status = (stage.outputs or {}).get("status") or stage.status
            runs["status"][status] = runs["status"].get(status, 0) + 1
            if stage.status == "ran":
                runs["stage"].append(stage.ms)
                runs["candidates"].append(stage.inputs.get("candidates", 0))
        out.update({"search_off_ms": summary(runs["off"]), "search_on_ms": summary(runs["on"]), "stage_ms": summary(runs["stage"]),
                    "candidates": summary(runs["candidates"]), "status": runs["status"]})
        # as shipped: the 2 s timeout (the stage then keeps the fused order)
        service.settings = load_settings(retrieval={**base, "reranker_enabled": True})
        stage = next(s for s in service.retriever.pipeline.stages if s.name == "rerank")
        shipped, statuses = [], {}
        for query in queries[5:5 + timeout_runs]:
            began = time.perf_counter()
            response = service.search(agent_id="bench", user_id="u0", query=query)
            shipped.append((time.perf_counter() - began) * 1000.0)
            status = (response.trace.stage("rerank").outputs or {}).get("status", "?")
            statuses[status] = statuses.get(status, 0) + 1
            # a timed-out call goes on on the stage's one worker thread: let it finish before the next search
            stage._executor.submit(lambda: None).result()
        out["shipped_timeout"] = {"timeout_s": service.settings.retrieval.reranker_timeout_s, "search_ms": summary(shipped),
                                  "status": statuses}
    out["load_average_after"] = load_average()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", type=int, nargs="+", default=[10, 30, 100])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 50_000])
    parser.add_argument("--searches", type=int, default=10)
    parser.add_argument("--timeout-runs", type=int, default=3)
    args = parser.parse_args()
    import torch

    data = {"machine": machine(), "load_average_before": load_average(), "torch_threads": torch.get_num_threads(),
            "stand_in": reranker_stand_in.NAME, "caption": CAPTION}
    model_dir = reranker_stand_in.build_directory()
    for size in sorted(set(args.sizes) | {50_000}):
        search_bench.ensure_store(size)
    settings = load_settings()
    began = time.perf_counter()
    scorer = build_reranker(str(model_dir), settings.retrieval.reranker_max_length)
    data["scorer_load_s"] = round(time.perf_counter() - began, 1)
    data["batch_size"] = scorer._model.batch_size
    with MemoryService.open(search_bench.store_path(50_000), load_settings(retrieval={"query_cache_size": 0}),
                            clock=FixedClock(CLOCK)) as service:
        data["by_count"] = stage_by_count(scorer, service, args.counts, args.reps)
    del scorer
    data["searches"] = [searches_with_stage(size, model_dir, args.searches, args.timeout_runs) for size in args.sizes]
    data["load_average_after"] = load_average()
    text = render(data)
    save("rerank_bench", data, text, directory=OUT)
    print(text)


def render(data: dict) -> str:
    rows = [[r["candidates"], r["score_call_ms"]["p50"], r["score_call_ms"]["p95"], r["one_forward_pass_ms"]["p50"],
             round(r["score_call_ms"]["p50"] / r["one_forward_pass_ms"]["p50"], 2) if r["one_forward_pass_ms"]["p50"] else "-",
             r["tokens_per_pair"]["mean"], r["tokens_per_pair"]["max"], r["tokens_per_call_mean"],
             round(r["score_call_ms"]["p50"] / r["candidates"], 1), r["load_average"][0]] for r in data["by_count"]]
    first = markdown_table(["candidates", "stage call p50 ms", "p95", "one forward pass p50 ms (same batches)", "call / one pass",
                            "tokens per pair (mean)", "max", "tokens per call", "ms per candidate", "load (1 min)"], rows)
    rows = []
    for r in data["searches"]:
        rows.append([f"{r['records']:,}", r["search_off_ms"]["p50"], r["search_off_ms"]["p95"], r["search_on_ms"]["p50"],
                     r["search_on_ms"]["p95"], r["stage_ms"].get("p50"), r["stage_ms"].get("p95"), r["candidates"].get("p50"),
                     r["candidates"].get("max"), r["status"], f"{r['shipped_timeout']['search_ms'].get('p50')} ({r['shipped_timeout']['status']})",
                     f"{r['load_average_before'][0]} / {r['load_average_after'][0]}"])
    second = markdown_table(["records", "search, stage off p50 ms (same run)", "p95", "search, stage on p50 ms", "p95",
                             "rerank stage p50 ms", "p95", "candidates reranked p50", "max", "stage outcome",
                             "with the shipped 2 s timeout: search p50 ms (outcome)", "load (1 min) before / after"], rows)
    return (f"{data['caption']} Torch threads {data['torch_threads']}; FlagEmbedding batch size {data['batch_size']}; scorer "
            f"load {data['scorer_load_s']} s. Load {data['load_average_before']} → {data['load_average_after']}. Reproduce: "
            "`OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python -m benchmarks.rerank_bench`.\n\nStage cost by candidate "
            "count (candidate texts: the 50K store's dense top n for benchmark queries):\n\n" + first
            + "\n\nmemory_search with the stage on (after_floors, timeout raised to 600 s so the stage finishes):\n\n" + second)


if __name__ == "__main__":
    main()
