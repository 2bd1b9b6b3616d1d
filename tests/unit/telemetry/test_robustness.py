"""Tracing never changes an answer: a raising exporter or processor, a sampler that drops
everything, tracing switched off, no provider, and no OpenTelemetry API at all."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

from memory_core import MemoryService
from memory_core.settings import default_settings
from memory_core.telemetry import NO_SCOPE, Telemetry
from tests.fakes import HashingEmbedder
from tests.unit.telemetry.conversation import EXPECTED, _conversation

ROOT = Path(__file__).resolve().parents[3]


class RaisingExporter(SpanExporter):
    def __init__(self) -> None:
        self.calls = 0

    def export(self, spans):
        self.calls += 1
        raise ConnectionError("the collector is down")

    def shutdown(self) -> None:
        pass


class RaisingProcessor(SpanProcessor):
    def __init__(self, when: str) -> None:
        self.when, self.calls = when, 0

    def on_start(self, span, parent_context=None) -> None:
        if self.when == "start":
            self.calls += 1
            raise RuntimeError("a broken processor (start)")

    def on_end(self, span) -> None:
        if self.when == "end":
            self.calls += 1
            raise RuntimeError("a broken processor (end)")


def test_a_raising_exporter_changes_no_answer_and_the_other_exporters_still_get_every_span(open_traced, settings):
    traced = open_traced(settings)
    exporter = RaisingExporter()
    traced.provider.add_span_processor(SimpleSpanProcessor(exporter))

    assert _conversation(traced.service) == EXPECTED

    assert exporter.calls == len(traced.spans()) > 0  # the broken exporter was offered every span
    assert len(traced.spans("search_memory")) == 1


@pytest.mark.parametrize("when", ["start", "end"])
def test_a_processor_that_raises_changes_no_answer(open_traced, settings, caplog, when):
    traced = open_traced(settings)
    processor = RaisingProcessor(when)
    traced.provider.add_span_processor(processor)

    with caplog.at_level(logging.WARNING, logger="memory_core.telemetry"):
        assert _conversation(traced.service) == EXPECTED

    assert processor.calls > 0
    assert any("the operation is unaffected" in r.getMessage() for r in caplog.records)


def test_a_sampler_that_drops_everything_records_nothing_and_changes_nothing(open_traced, settings):
    traced = open_traced(settings, provider_args={"sampler": ALWAYS_OFF})
    assert _conversation(traced.service) == EXPECTED
    assert traced.spans() == []


def test_tracing_switched_off_makes_no_span_even_with_a_provider(open_traced):
    traced = open_traced(default_settings(telemetry={"enabled": False}))
    assert _conversation(traced.service) == EXPECTED
    assert traced.spans() == []
    assert traced.service.telemetry.span("search_memory") is NO_SCOPE


def test_without_a_provider_an_operation_starts_nothing_that_records(tmp_path, settings, clock):
    # the API's global provider is the default proxy here (no test installs one outside global_provider)
    telemetry = Telemetry(settings.telemetry)
    assert telemetry.span("search_memory", lambda: 1 / 0) is NO_SCOPE  # attributes are never built
    with MemoryService.open(tmp_path / "m.sqlite", settings, clock=clock, embedder=HashingEmbedder()) as service:
        assert _conversation(service) == EXPECTED


def test_without_the_opentelemetry_api_tracing_is_simply_off(tmp_path):
    code = textwrap.dedent(f"""
        import sys
        sys.modules["opentelemetry"] = None  # how Python marks a package that is not installed
        from memory_core import FixedClock, MemoryService
        from memory_core.settings import default_settings
        from tests.fakes import HashingEmbedder
        from tests.unit.telemetry.conversation import EXPECTED, _conversation
        service = MemoryService.open({str(tmp_path / 'm.sqlite')!r}, default_settings(), clock=FixedClock("2026-03-05T10:00:00Z"),
                                     embedder=HashingEmbedder())
        assert service.telemetry.enabled is False
        assert _conversation(service) == EXPECTED, _conversation(service)
        assert not any(name.startswith("opentelemetry.") for name in sys.modules)
        print("ok")
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stdout + done.stderr
