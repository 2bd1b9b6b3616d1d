"""A/B of the gate's known-name rule on the 50K search-benchmark store (build it first with
``python -m benchmarks.search_bench --sizes 50000``): the benchmark's query mix, each query searched
with the rule on and off in alternating order, query-vector cache off. Prints p50s, how many
searches made the extra name-stripped embedding, and any search the rule emptied.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.name_rule_ab
"""

from __future__ import annotations

import statistics
import time

from memory_core import FixedClock, MemoryService, load_settings

from . import search_corpus
from .search_bench import CLOCK, store_path


def main(size: int = 50000, searches: int = 300) -> None:
    queries = search_corpus.queries(searches + 20)
    on = load_settings(retrieval={"query_cache_size": 0})
    off = load_settings(retrieval={"query_cache_size": 0, "name_rest_cosine": -1.0})
    with MemoryService.open(store_path(size), on, clock=FixedClock(CLOCK)) as service:
        retriever = service.retriever
        for query in queries[:20]:  # warm-up
            retriever.search(agent_id="bench", user_id="u0", query=query, settings=on.retrieval)
        times: dict[str, list[float]] = {"on": [], "off": []}
        embedded: list[int] = []
        full = 0
        for i, query in enumerate(queries[20:]):
            order = (("on", on), ("off", off)) if i % 2 == 0 else (("off", off), ("on", on))
            for name, settings in order:
                began = time.perf_counter()
                response = retriever.search(agent_id="bench", user_id="u0", query=query, settings=settings.retrieval)
                times[name].append((time.perf_counter() - began) * 1000)
                if name != "on":
                    continue
                gate = response.trace.stage("gate").outputs
                if gate.get("best_rest_cosine") is not None:
                    embedded.append(i)
                full += len(response.trace.stage("entity").outputs.get("candidates") or []) >= settings.retrieval.candidates_per_generator
                if response.empty and (response.empty_reason or "").startswith("mentions "):
                    print("emptied by the rule:", query, "|", response.empty_reason)
        print(f"{len(times['on'])} searches at {size}: p50 rule on {statistics.median(times['on']):.2f} ms, "
              f"off {statistics.median(times['off']):.2f} ms; full entity lists {full}; name-stripped embedding {len(embedded)}")
        if embedded:
            print(f"  those {len(embedded)}: p50 on {statistics.median(times['on'][i] for i in embedded):.2f} ms, "
                  f"off {statistics.median(times['off'][i] for i in embedded):.2f} ms")


if __name__ == "__main__":
    main()
