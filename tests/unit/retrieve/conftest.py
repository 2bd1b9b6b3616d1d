"""Fixtures for retrieval tests: services built with custom retrieval settings."""

import pytest

from memory_core import MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder


@pytest.fixture
def make_service(make_target, clock):
    """Build a service (hashing embedder) with retrieval setting overrides; closed at teardown."""
    opened = []

    def make(name: str = "memory.sqlite", llm=None, **retrieval):
        settings = default_settings(retrieval=retrieval) if retrieval else default_settings()
        svc = MemoryService.open(make_target(name), settings, clock=clock, embedder=HashingEmbedder(), llm=llm)
        opened.append(svc)
        return svc

    yield make
    for svc in opened:
        svc.close()

