"""What OpenTelemetry tracing costs a search and a write (issue 29).

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python -m benchmarks.otel_overhead [--size 1000] [--rounds 6] [--per-block 15]

One process, one store (a copy of the search benchmark's synthetic store of ``--size`` records,
searched as its principal, agent ``bench`` for user ``u0``), the packaged embedder, and one
service per configuration on that same file:

* ``no provider``: the host configured nothing (the API's default proxy provider). The reference.
* ``tracing off``: an SDK provider is configured but ``telemetry.enabled`` is false.
* ``SDK, no-op exporter``: an SDK ``TracerProvider`` with a ``BatchSpanProcessor`` (what a host
  runs in production) in front of an exporter that drops every batch.
* ``SDK, in-memory exporter``: the same provider with a ``SimpleSpanProcessor`` (export on the
  calling thread, the worst case) into the SDK's ``InMemorySpanExporter``, cleared between blocks.

Calls interleaved: one memory_search (through the tool path, so the tool span, the search span and
one span per stage are all made) per configuration in turn, then one memory_write each, the order
rotating every step, so every configuration sees the same moment of a shared machine. Besides each
configuration's p50, the table gives the median of the paired differences (each call minus the
``no provider`` call of the same step), which is what load swings disturb least, and the same for
this process's CPU time (``time.process_time``, every thread of the process, the batch exporter's
included), which other processes on a shared machine do not inflate.
Each search query repeats across configurations (the query-vector cache is on, as by default:
the search's own work is what is left). Also timed in the same run: the no-op span itself (what an
operation pays with no provider). Writes benchmarks/results/otel_overhead.{json,md}.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.pop("OTEL_SDK_DISABLED", None)  # the Makefile's test setting would turn the SDK into a no-op

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter, SpanExportResult  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from memory_core import FixedClock, MemoryService, load_settings  # noqa: E402
from memory_core.telemetry import Telemetry  # noqa: E402

from . import search_bench  # noqa: E402
from .stats import load_average, machine, markdown_table, save, summary  # noqa: E402

KINDS = ("search", "write", "search cpu", "write cpu")  # wall time, and this process's CPU time (all its threads)
CONFIGS = ("no provider", "tracing off", "SDK, no-op exporter", "SDK, in-memory exporter")


class DropExporter(SpanExporter):
    """Accepts every batch and keeps nothing (the cost of the SDK without the network)."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def open_services(path: Path) -> tuple[dict, dict]:
    settings = load_settings()
    drop, memory = DropExporter(), InMemorySpanExporter()
    batch = TracerProvider()
    batch.add_span_processor(BatchSpanProcessor(drop))
    simple = TracerProvider()
    simple.add_span_processor(SimpleSpanProcessor(memory))
    off = settings.model_copy(update={"telemetry": settings.telemetry.model_copy(update={"enabled": False})})
    clock = FixedClock(search_bench.CLOCK)
    services = {
        "no provider": MemoryService.open(path, settings, clock=clock),
        "tracing off": MemoryService.open(path, off, clock=clock, tracer_provider=simple),
        "SDK, no-op exporter": MemoryService.open(path, settings, clock=clock, tracer_provider=batch),
        "SDK, in-memory exporter": MemoryService.open(path, settings, clock=clock, tracer_provider=simple),
    }
    return services, {"drop": drop, "memory": memory, "providers": (batch, simple)}


def noop_span_ns(count: int = 200_000, *, enabled: bool = True) -> float:
    """Nanoseconds of one ``with telemetry.span(...)`` on the API's default (unconfigured) provider
    (or, with ``enabled`` false, with tracing switched off in the settings)."""
    settings = load_settings().telemetry.model_copy(update={"enabled": enabled})
    telemetry = Telemetry(settings)
    began = time.perf_counter_ns()
    for _ in range(count):
        with telemetry.span("search_memory", dict):
            pass
    return (time.perf_counter_ns() - began) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--per-block", type=int, default=15)
    args = parser.parse_args()

    load_before = load_average()
    built = search_bench.ensure_store(args.size)
    work = Path(tempfile.mkdtemp(prefix="otel-bench-"))
    path = work / "store.sqlite"
    shutil.copy(search_bench.store_path(args.size), path)
    services, sinks = open_services(path)
    services["no provider"].grant("bench", "user:u0", read=True, write=True, actor="bench")
    sessions = {name: s.start_session(agent_id="bench", user_id="u0") for name, s in services.items()}
    queries = search_bench.unique_queries(args.per_block)
    for name, session in sessions.items():  # warm: models loaded, query vectors cached, indexes current
        for query in queries:
            session.call_tool("memory_search", {"query": query})
    times: dict[str, dict[str, list[float]]] = {name: {kind: [] for kind in KINDS} for name in CONFIGS}
    serial = 0
    paired: dict[str, dict[str, list[float]]] = {name: {kind: [] for kind in KINDS} for name in CONFIGS}
    for round_no in range(args.rounds):
        for i in range(args.per_block):
            # one call per configuration in turn, the order rotating: each sees the same moment of the machine
            start = (round_no * args.per_block + i) % len(CONFIGS)
            order = CONFIGS[start:] + CONFIGS[:start]
            took: dict[str, dict[str, float]] = {}
            for name in order:
                began, cpu = time.perf_counter(), time.process_time()
                result = sessions[name].call_tool("memory_search", {"query": queries[i]})
                took.setdefault(name, {})["search"] = (time.perf_counter() - began) * 1000.0
                took[name]["search cpu"] = (time.process_time() - cpu) * 1000.0
                assert result["ok"], result
            for name in order:
                serial += 1
                began, cpu = time.perf_counter(), time.process_time()
                result = sessions[name].call_tool("memory_write", {
                    "type": "semantic", "content": f"The user noted item {serial} for the {name} run of round {round_no}."})
                took[name]["write"] = (time.perf_counter() - began) * 1000.0
                took[name]["write cpu"] = (time.process_time() - cpu) * 1000.0
                assert result["ok"], result
            for name in CONFIGS:
                for kind in KINDS:
                    times[name][kind].append(took[name][kind])
                    paired[name][kind].append(took[name][kind] - took["no provider"][kind])
        sinks["memory"].clear()
    span_ns, off_ns = noop_span_ns(), noop_span_ns(enabled=False)
    for provider in sinks["providers"]:
        provider.force_flush()
    probe = InMemorySpanExporter()
    probe_provider = TracerProvider()
    probe_provider.add_span_processor(SimpleSpanProcessor(probe))
    with MemoryService.open(path, load_settings(), clock=FixedClock(search_bench.CLOCK), tracer_provider=probe_provider) as svc:
        svc.start_session(agent_id="bench", user_id="u0").call_tool("memory_search", {"query": queries[0]})
        spans_per_search = len(probe.get_finished_spans())
    for service in services.values():
        service.close()
    shutil.rmtree(work, ignore_errors=True)

    ref = {kind: summary(times["no provider"][kind])["p50"] for kind in KINDS}
    results = {
        "machine": machine(), "load_before": load_before, "load_after": load_average(), "size": args.size,
        "store": built, "rounds": args.rounds, "per_block": args.per_block, "spans_per_search": spans_per_search,
        "spans_dropped_by_noop_exporter": sinks["drop"].spans, "noop_span_ns": round(span_ns, 1), "disabled_span_ns": round(off_ns, 1),
        "configs": {name: {kind: summary(values) for kind, values in kinds.items()} for name, kinds in times.items()},
        "paired_difference_ms": {name: {kind: summary(values) for kind, values in kinds.items()} for name, kinds in paired.items()},
    }
    rows = []
    for name in CONFIGS:
        row = [name]
        for kind in KINDS:
            p50, diff = results["configs"][name][kind]["p50"], results["paired_difference_ms"][name][kind]["p50"]
            row.append(f"{p50} ({p50 / ref[kind]:.3f}; {diff:+.2f})")
        rows.append(row)
    table = markdown_table(["configuration"] + [f"{kind} p50 ms (/ no provider; median paired diff)" for kind in KINDS], rows)
    note = (f"\n\n{args.size} records, {args.rounds} rounds x {args.per_block} searches and writes per configuration "
            f"(n={len(times['no provider']['search'])} each, interleaved), {spans_per_search} spans per tool search; "
            f"a span costs {span_ns:.0f} ns with no provider ({off_ns:.0f} ns with tracing off). Load (1/5/15 min) before {load_before}, after "
            f"{results['load_after']}; {machine()['cpus']} CPUs.")
    save("otel_overhead", results, table + note)
    print(table + note)


if __name__ == "__main__":
    main()
