import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest

from memory_core import FixedClock, MemoryService, load_settings
from tests.fakes import HashingEmbedder


@pytest.fixture
def clock():
    return FixedClock("2026-03-05T10:00:00Z")


@pytest.fixture
def settings():
    return load_settings()


@pytest.fixture
def service(tmp_path, clock, settings):
    """A fresh store with the tiny hashing embedder (fast unit tests)."""
    svc = MemoryService.open(tmp_path / "memory.sqlite", settings, clock=clock, embedder=HashingEmbedder())
    yield svc
    svc.close()


@pytest.fixture
def alice(service):
    """Agent 'assistant' acting for user 'alice', with read+write on user:alice."""
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    return service.start_session(agent_id="assistant", user_id="alice")
