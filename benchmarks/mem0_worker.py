"""The mem0 side of benchmarks/peer_mem0.py. Runs inside benchmarks/.venv-mem0, never in the project's venv.

    benchmarks/.venv-mem0/bin/python benchmarks/mem0_worker.py JOB.json RESULT.json

It imports nothing from this repository. The job file (written by peer_mem0.py) holds the model
directory, the LoCoMo turns and questions and the latency corpora; the result file gets rankings,
empty counts and timings. Before mem0 is imported, every socket connection to a non-loopback
address is refused and counted, so the result proves that no network call was made.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import sys
import time
from datetime import datetime, timezone

BLOCKED: list[str] = []


def _guard_network() -> None:
    """Refuse (and record) any connection that would leave this machine."""
    loopback = ("127.", "::1", "localhost")

    def allowed(address) -> bool:
        host = address[0] if isinstance(address, tuple) else str(address)
        return isinstance(host, str) and host.startswith(loopback)

    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not allowed(address):
            BLOCKED.append(f"connect {address}")
            raise ConnectionRefusedError(f"network disabled by the benchmark: {address}")
        return real_connect(self, address)

    def connect_ex(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not allowed(address):
            BLOCKED.append(f"connect_ex {address}")
            return 111
        return real_connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if host and not str(host).startswith(loopback):
            BLOCKED.append(f"getaddrinfo {host}")
            raise socket.gaierror(f"name resolution disabled by the benchmark: {host}")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo


def _config(job: dict, root: str, collection: str) -> dict:
    """mem0 configured for raw mode: local qdrant, the packaged MiniLM, an LLM that is never reached."""
    return {
        # one local Qdrant folder per store: local mode locks its folder for the client's lifetime
        "vector_store": {"provider": "qdrant", "config": {"collection_name": collection, "path": os.path.join(root, f"qdrant-{collection}"),
                                                           "embedding_model_dims": 384, "on_disk": False}},
        "embedder": {"provider": "huggingface", "config": {"model": job["model_path"], "embedding_dims": 384}},
        # infer=False never calls the LLM, but mem0 builds one at start-up: a placeholder key and a
        # loopback address nothing listens on, so even an accidental call could not leave the machine.
        "llm": {"provider": "openai", "config": {"api_key": "offline-placeholder", "openai_base_url": "http://127.0.0.1:9/v1",
                                                 "model": "gpt-4.1-nano"}},
        "history_db_path": os.path.join(root, f"history-{collection}.db"),
    }


def _percentiles(values: list[float]) -> dict:
    ordered = sorted(values)

    def pct(p: float) -> float:
        if not ordered:
            return float("nan")
        k = (len(ordered) - 1) * p / 100.0
        lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)

    return {"n": len(values), "p50": pct(50), "p95": pct(95), "mean": sum(values) / len(values) if values else float("nan")}


def _prime(memory, texts: list[str], batch: int = 64) -> None:
    """Embed texts with mem0's own embed_batch and serve them to add() from a cache (same vectors)."""
    model = memory.embedding_model
    cache: dict[str, list[float]] = {}
    todo = list(dict.fromkeys(texts))
    for start in range(0, len(todo), batch):
        chunk = todo[start:start + batch]
        for text, vector in zip(chunk, model.embed_batch(chunk)):
            cache[text] = vector
    original = model.embed

    def embed(text, memory_action=None):
        if memory_action == "add" and isinstance(text, str) and text in cache:
            return cache[text]
        return original(text, memory_action)

    model.embed = embed


def run_locomo(job: dict, root: str) -> dict:
    from mem0 import Memory

    began = time.perf_counter()
    memory = Memory.from_config(_config(job, root, "locomo"))
    load_s = time.perf_counter() - began
    turns = [t for conv in job["locomo"] for t in conv["turns"]]
    began = time.perf_counter()
    _prime(memory, [t["content"] for t in turns])
    embed_s = time.perf_counter() - began
    began = time.perf_counter()
    for conv in job["locomo"]:
        for turn in conv["turns"]:
            memory.add(turn["content"], user_id=conv["user"], metadata={"dia_id": turn["dia_id"]}, infer=False)
    add_s = time.perf_counter() - began

    def ask(user: str, text: str) -> tuple[list[str], float]:
        t0 = time.perf_counter()
        found = memory.search(text, filters={"user_id": user}, top_k=10)
        ms = (time.perf_counter() - t0) * 1000.0
        return [(r.get("metadata") or {}).get("dia_id") for r in found.get("results", [])], ms

    answers, foreign, search_ms = {}, {}, []
    began = time.perf_counter()
    for conv in job["locomo"]:
        for q in conv["questions"]:
            answers[q["qid"]], ms = ask(conv["user"], q["text"])
            search_ms.append(ms)
        for q in conv["off_topic"]:
            ids, ms = ask(conv["user"], q["text"])
            foreign[f"{conv['user']}<-{q['qid']}"] = len(ids)
            search_ms.append(ms)
    return {"rankings": answers, "off_topic_result_counts": foreign, "model_load_s": load_s, "batch_embedding_s": embed_s,
            "add_s": add_s, "search_s": time.perf_counter() - began, "search_ms": _percentiles(search_ms), "turns": len(turns)}


def run_latency(job: dict, root: str) -> dict:
    """Search latency on stores of each size; records are bulk-inserted into mem0's vector store the
    way ``Memory._create_memory`` shapes them (our side is bulk-loaded the same way)."""
    from mem0 import Memory

    spec = job["latency"]
    texts, users = spec["texts"], spec["users"]
    shared = None
    if spec.get("vectors") and os.path.exists(spec["vectors"]):
        import numpy as np  # the same MiniLM vectors the project side loads, so no one embeds 50K texts twice

        shared = np.load(spec["vectors"]).tolist()
    out = {}
    for size in spec["sizes"]:
        memory = Memory.from_config(_config(job, root, f"bench{size}"))
        began = time.perf_counter()
        vectors = shared[:size] if shared is not None else memory.embedding_model.embed_batch(texts[:size])
        embed_s = time.perf_counter() - began
        began = time.perf_counter()
        now = datetime.now(timezone.utc).isoformat()
        for start in range(0, size, 1000):
            stop = min(size, start + 1000)
            ids = [hashlib.md5(f"{size}-{i}".encode()).hexdigest() for i in range(start, stop)]
            ids = [f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}" for h in ids]
            payloads = [{"data": texts[i], "hash": hashlib.md5(texts[i].encode()).hexdigest(), "created_at": now, "updated_at": now,
                         "text_lemmatized": texts[i], "user_id": f"user{i % users}", "role": "user"} for i in range(start, stop)]
            memory.vector_store.insert(vectors=vectors[start:stop], ids=ids, payloads=payloads)
        insert_s = time.perf_counter() - began
        for q in spec["queries"][: spec["warmup"]]:
            memory.search(q, filters={"user_id": "user0"}, top_k=10)
        timings = []
        before = round(os.getloadavg()[0], 2)
        for q in spec["queries"]:
            t0 = time.perf_counter()
            memory.search(q, filters={"user_id": "user0"}, top_k=10)
            timings.append((time.perf_counter() - t0) * 1000.0)
        out[str(size)] = {"search_ms": _percentiles(timings), "embed_s": embed_s, "insert_s": insert_s,
                          "load_average": [before, round(os.getloadavg()[0], 2)]}
        print(f"  mem0 {size}: p50 {out[str(size)]['search_ms']['p50']:.1f} ms", flush=True)
    return out


def main() -> int:
    _guard_network()
    job_path, result_path = sys.argv[1], sys.argv[2]
    with open(job_path, encoding="utf-8") as fh:
        job = json.load(fh)
    root = job["workdir"]
    shutil.rmtree(root, ignore_errors=True)  # a fresh mem0 store every run (it lives under benchmarks/out/peer)
    os.makedirs(root, exist_ok=True)
    import torch

    if job.get("torch_threads"):
        torch.set_num_threads(int(job["torch_threads"]))  # the same intra-op threads as the project's embedder
    import mem0

    result = {"mem0_version": getattr(mem0, "__version__", "?"), "python": sys.version.split()[0],
              "torch": torch.__version__, "torch_threads": torch.get_num_threads()}
    if job.get("locomo"):
        print("  mem0: LoCoMo", flush=True)
        result["locomo"] = run_locomo(job, root)
        with open(result_path, "w", encoding="utf-8") as fh:  # keep the LoCoMo part even if the sweep fails
            json.dump(result, fh)
    if job.get("latency"):
        print("  mem0: latency sweep", flush=True)
        result["latency"] = run_latency(job, root)
    result["blocked_network_attempts"] = BLOCKED
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
