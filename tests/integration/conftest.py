"""Fixtures shared by the integration tests."""

import pytest

from memory_core import FixedClock, MemoryService
from memory_core.demo import build_demo_store, demo_settings


@pytest.fixture(scope="module")
def demo_service(tmp_path_factory):
    """A service on a freshly built demo store (one per test module), at the demo's own time."""
    path = tmp_path_factory.mktemp("demo") / "demo.sqlite"
    summary = build_demo_store(path, progress=None)
    svc = MemoryService.open(path, demo_settings(), clock=FixedClock(summary["demo_now"]))
    yield svc
    svc.close()
