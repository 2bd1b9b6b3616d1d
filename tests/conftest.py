import os

# A developer's MEMORY_* variables (or API key) must not change what the tests see: drop them
# before anything reads the environment. Tests that need a variable set it with monkeypatch.
for _name in [n for n in os.environ if n.startswith("MEMORY_") or n == "ANTHROPIC_API_KEY"]:
    del os.environ[_name]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest

from memory_core import FixedClock, MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder


@pytest.fixture
def clock():
    return FixedClock("2026-03-05T10:00:00Z")


@pytest.fixture
def settings():
    """Default settings; never read from the environment."""
    return default_settings()


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
