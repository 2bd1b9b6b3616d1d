"""The contract suite: every test here runs against both store backends, whatever --store-backend says.

``backend`` is "sqlite" or "postgresql"; ``target`` a fresh store of that backend (a file, or a new
database on the PostgreSQL server the test run starts, see tests/pg_server.py).
"""

import pytest

from memory_core import MemoryService
from tests.fakes import HashingEmbedder


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request):
    return request.param


@pytest.fixture
def new_target(tmp_path):
    """A factory: a fresh empty store target of the given backend."""
    from tests import pg_server

    with pg_server.store_targets(tmp_path) as make:
        yield make


@pytest.fixture
def target(backend, new_target):
    return new_target(backend)


@pytest.fixture
def any_service(target, clock, settings):
    """A service on the parametrised backend, with the hashing embedder."""
    svc = MemoryService.open(target, settings, clock=clock, embedder=HashingEmbedder())
    yield svc
    svc.close()
