import os

LIVE_TESTS_FLAG = "AGENT_MEMORY_LIVE_TESTS"


def set_aside_environment(environ) -> str | None:
    """Drop a developer's MEMORY_* variables and API key from ``environ``, so they cannot change what
    the tests see; return the Anthropic key when the person running the tests gave it on purpose
    (``AGENT_MEMORY_LIVE_TESTS=1``), else None. The key is kept aside even then: only the tests that
    ask for :func:`live_anthropic_key` get it back, so no other test talks to the model."""
    key = environ.get("ANTHROPIC_API_KEY") if environ.get(LIVE_TESTS_FLAG) == "1" else None
    for name in [n for n in environ if n.startswith("MEMORY_") or n == "ANTHROPIC_API_KEY"]:
        del environ[name]
    return key or None


# Before anything reads the environment. Tests that need a variable set it with monkeypatch.
_LIVE_ANTHROPIC_KEY = set_aside_environment(os.environ)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest

from memory_core import FixedClock, MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder


@pytest.fixture
def live_anthropic_key(monkeypatch):
    """The Anthropic key, in ``ANTHROPIC_API_KEY`` for this test only; skips the test unless a person
    gave one on purpose: ``AGENT_MEMORY_LIVE_TESTS=1 ANTHROPIC_API_KEY=... pytest <the live tests>``."""
    if not _LIVE_ANTHROPIC_KEY:
        pytest.skip(f"a live Anthropic test: runs only with {LIVE_TESTS_FLAG}=1 and ANTHROPIC_API_KEY set")
    monkeypatch.setenv("ANTHROPIC_API_KEY", _LIVE_ANTHROPIC_KEY)
    return _LIVE_ANTHROPIC_KEY


@pytest.fixture
def clock():
    return FixedClock("2026-03-05T10:00:00Z")


@pytest.fixture
def settings():
    """Default settings; never read from the environment."""
    return default_settings()


def pytest_addoption(parser):
    parser.addoption("--store-backend", default=os.environ.get("MEMORY_TEST_BACKEND", "sqlite"),
                     choices=("sqlite", "postgresql"),
                     help="backend of the `service` and `store_target` fixtures (default sqlite; the PostgreSQL "
                     "server is started by the test run, see tests/pg_server.py)")


def pytest_sessionfinish(session, exitstatus):
    from tests import pg_server

    pg_server.stop()


def pytest_collection_modifyitems(config, items):
    if config.getoption("--store-backend") != "postgresql":
        return
    skip = pytest.mark.skip(reason="SQLite internals (FTS5 tables, file bytes, connection hooks); PostgreSQL counterparts are in tests/contract")
    for item in items:
        if "sqlite_only" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def make_target(request, tmp_path):
    """A factory of fresh store targets by name: SQLite files in tmp_path, or new PostgreSQL databases."""
    from tests import pg_server

    backend = request.config.getoption("--store-backend")
    with pg_server.store_targets(tmp_path) as make:
        yield lambda name="memory.sqlite": make(backend, name)


@pytest.fixture
def store_target(make_target):
    """Where a test's store lives: a fresh SQLite file, or a fresh database on the test PostgreSQL server
    (``--store-backend postgresql``)."""
    return make_target()


@pytest.fixture
def service(store_target, clock, settings):
    """A fresh store with the tiny hashing embedder (fast unit tests)."""
    svc = MemoryService.open(store_target, settings, clock=clock, embedder=HashingEmbedder())
    yield svc
    svc.close()


@pytest.fixture
def alice(service):
    """Agent 'assistant' acting for user 'alice', with read+write on user:alice."""
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    return service.start_session(agent_id="assistant", user_id="alice")
