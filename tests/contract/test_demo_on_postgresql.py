"""The demo world with the real packaged model, moved to PostgreSQL with migrate-store: every
search the seed documents gives the same results and the same empty reasons on both backends
(the gate's floors, calibrated on SQLite, hold unchanged)."""

from pathlib import Path

import pytest

from memory_core import FixedClock, MemoryService
from memory_core.demo import build_demo_store, demo_settings
from memory_core.demo_seed import load_seed
from memory_core.store.backend import open_store
from memory_core.store.transfer import copy_store

pytestmark = pytest.mark.model

ROOT = Path(__file__).resolve().parents[2]


def _answers(target, seed, embedder=None):
    clock = FixedClock(seed.searches[0].at)
    svc = MemoryService.open(target, demo_settings(), clock=clock, embedder=embedder)
    try:
        out = {}
        for spec in seed.searches:
            clock.set(spec.at)
            response = svc.search(agent_id=spec.agent, user_id=spec.user, query=spec.query)
            out[spec.label] = ([(r.record_id, r.explanation.generators.get("dense", {}).get("cosine"),
                                 r.explanation.generators.get("lexical", {}).get("lexical")) for r in response.results],
                               response.empty_reason)
        return out, svc.embedder
    finally:
        svc.close()


def test_the_demo_searches_answer_the_same_on_postgresql(tmp_path, new_target):
    seed = load_seed(ROOT / "seed_data")
    path = tmp_path / "demo.sqlite"
    build_demo_store(path)
    url = new_target("postgresql")
    source, destination = open_store(path, "2026-01-01T00:00:00Z"), open_store(url, "2026-01-01T00:00:00Z")
    try:
        report = copy_store(source, destination)
    finally:
        source.close()
        destination.close()
    assert report.ok, report.text()
    on_sqlite, embedder = _answers(path, seed)
    on_postgres, _ = _answers(url, seed, embedder)
    assert on_postgres == on_sqlite
    assert any(results for results, _ in on_sqlite.values()) and any(not results for results, _ in on_sqlite.values())
