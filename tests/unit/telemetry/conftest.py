"""Tracing fixtures: an SDK tracer provider with an in-memory exporter, made and shut down per test.

The library only uses the OpenTelemetry API; the SDK here stands in for the host's configuration.
A service gets the provider explicitly (``tracer_provider=``), so no test touches the global one;
:func:`global_provider` is for the MCP SDK, whose own spans always go to the global provider: it
installs one for the test and puts the API's "not set yet" state back afterwards (what
opentelemetry-test-utils does), so nothing leaks into the next test.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once

from memory_core import MemoryService
from tests.fakes import HashingEmbedder


@dataclass
class Traced:
    service: MemoryService
    exporter: InMemorySpanExporter
    provider: TracerProvider

    def spans(self, name: str | None = None) -> list:
        """Finished spans (in the order they ended), or only those called ``name``."""
        found = list(self.exporter.get_finished_spans())
        return [s for s in found if name is None or s.name == name]

    def one(self, name: str):
        found = self.spans(name)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def children(self, parent) -> list:
        return [s for s in self.spans() if s.parent is not None and s.parent.span_id == parent.context.span_id]


def provider_with_memory_exporter(**provider_args) -> tuple[TracerProvider, InMemorySpanExporter]:
    """An SDK provider exporting to memory. Built with the SDK switched on: the test environment sets
    OTEL_SDK_DISABLED=true (so no library ships spans from a test run), which makes providers no-ops."""
    exporter = InMemorySpanExporter()
    previous = os.environ.pop("OTEL_SDK_DISABLED", None)
    try:
        provider = TracerProvider(**provider_args)
    finally:
        if previous is not None:
            os.environ["OTEL_SDK_DISABLED"] = previous
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


@pytest.fixture
def open_traced(store_target, clock):
    """A factory: a service on a fresh store whose spans go to an in-memory exporter."""
    made: list[Traced] = []

    def make(settings, *, target=None, provider_args=None) -> Traced:
        provider, exporter = provider_with_memory_exporter(**(provider_args or {}))
        service = MemoryService.open(target or store_target, settings, clock=clock, embedder=HashingEmbedder(),
                                     tracer_provider=provider)
        made.append(Traced(service, exporter, provider))
        return made[-1]

    yield make
    for traced in made:
        traced.service.close()
        traced.provider.shutdown()


@pytest.fixture
def traced(open_traced, settings):
    """A traced service with default settings and agent 'assistant' granted read+write on user:alice."""
    t = open_traced(settings)
    t.service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    return t


@pytest.fixture
def global_provider():
    """An SDK provider installed as the global one for this test only (see the module docstring)."""
    provider, exporter = provider_with_memory_exporter()
    assert trace._TRACER_PROVIDER is None, "another test left a global tracer provider behind"
    trace.set_tracer_provider(provider)
    try:
        yield provider, exporter
    finally:
        provider.shutdown()
        trace._TRACER_PROVIDER = None
        trace._TRACER_PROVIDER_SET_ONCE = Once()
