"""A/B of how a query naming a known entity is handled, on the 50K search-benchmark store (build it
first with ``python -m benchmarks.search_bench --sizes 50000``): the benchmark's query mix, each
query searched under every variant in rotating order, query-vector cache off. Variants:

- ``shipped``: the defaults (the name-stripped list in the fusion, the known-name model with the
  word-level signals, and the short-list rule);
- ``previous``: the defaults before the word-level signals and the short-list rule (issue 13, first
  known-name model: six signals, floor 0.105);
- ``rule``: the defaults before that (no name-stripped list; the two-floor known-name rule);
- ``none``: neither (no name-stripped embedding at all).

Prints p50s, how many searches made the name-stripped embedding, and any search emptied by the
known-name check.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.name_rule_ab
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from memory_core import FixedClock, MemoryService, load_settings

from . import search_corpus
from .search_bench import CLOCK, store_path


def variants() -> dict:
    """The settings of each variant (query-vector cache off, so every search embeds)."""
    return {
        "shipped": load_settings(retrieval={"query_cache_size": 0}),
        "previous": load_settings(retrieval={"query_cache_size": 0, "short_list_names_need_rest": False, "name_model_floor": 0.105,
                                             "name_model_weights": [-9.469371, 0.0, 0.007234, 7.767924, 7.111005, 0.00733, 1.309444]}),
        "rule": load_settings(retrieval={"query_cache_size": 0, "rest_list_in_fusion": False, "name_model_floor": -1.0,
                                         "short_list_names_need_rest": False,
                                         "name_rest_cosine": 0.26, "name_rest_lexical": 1.0}),
        "none": load_settings(retrieval={"query_cache_size": 0, "rest_list_in_fusion": False, "name_model_floor": -1.0,
                                         "name_rest_cosine": -1.0, "short_list_names_need_rest": False}),
    }


def main(size: int = 50000, searches: int = 300) -> None:
    queries = search_corpus.queries(searches + 20)
    settings = variants()
    names = list(settings)
    load = Path("/proc/loadavg").read_text().split()[0]
    with MemoryService.open(store_path(size), settings["shipped"], clock=FixedClock(CLOCK)) as service:
        retriever = service.retriever
        for query in queries[:20]:  # warm-up
            for name in names:
                retriever.search(agent_id="bench", user_id="u0", query=query, settings=settings[name].retrieval)
        times: dict[str, list[float]] = {name: [] for name in names}
        embedded: dict[str, list[int]] = {name: [] for name in names}
        for i, query in enumerate(queries[20:]):
            for name in names[i % len(names):] + names[:i % len(names)]:  # rotate the order so load drift hits all
                began = time.perf_counter()
                response = retriever.search(agent_id="bench", user_id="u0", query=query, settings=settings[name].retrieval)
                times[name].append((time.perf_counter() - began) * 1000)
                if response.trace.stage("gate").outputs.get("best_rest_cosine") is not None or \
                        "name_stripped" in response.trace.stage("fusion").inputs.get("fused_lists", []):
                    embedded[name].append(i)
                if response.empty and (response.empty_reason or "").startswith("mentions "):
                    print(f"[{name}] emptied by the known-name check:", query, "|", response.empty_reason)
    print(f"{searches} searches at {size} records, load average {load} before, "
          f"{Path('/proc/loadavg').read_text().split()[0]} after")
    for name in names:
        print(f"  {name}: p50 {statistics.median(times[name]):.2f} ms, p95 {statistics.quantiles(times[name], n=20)[-1]:.2f} ms; "
              f"name-stripped embedding in {len(embedded[name])} searches")
    ref = statistics.median(times["none"])
    for name in names:
        print(f"  {name} p50 / none p50: {statistics.median(times[name]) / ref:.3f}")


if __name__ == "__main__":
    main()
