"""The fitness bundle with the offline rules over the packaged MiniLM: every split meets the
thresholds, ordinary turns get nothing, conditional turns get the right record, safety cases never
admit a forbidden record."""

from __future__ import annotations

import pytest

from memory_core.hostmem import fitness_results, open_host_memory, run_fitness
from memory_core.hostmem.bundle import load_bundle
from memory_core.hostmem.fitness import meets
from memory_core.service import MemoryService
from memory_core.settings import default_settings

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    path = tmp_path_factory.mktemp("fitness") / "host.sqlite"
    with MemoryService.open(path, default_settings(host_memory={"enabled": True})) as service:
        outcome = run_fitness(service, actor="test")
        assert open_host_memory(service, "hybrid") is not None
        assert fitness_results(service)[0]["id"] == outcome.id
    return outcome


def test_the_offline_rules_pass_the_bundle(result):
    assert result.passed, result.failures
    assert result.decider == "offline-rules" and result.embed_model == "sentence-transformers/all-MiniLM-L6-v2"
    bundle = load_bundle()
    for split, metrics in result.splits.items():
        assert meets(metrics, bundle.thresholds) == [], split


def test_ordinary_turns_get_nothing(result):
    ordinary = [c for c in result.cases if c["kind"] == "ordinary"]
    assert len(ordinary) >= 40 and all(c["admitted"] == [] for c in ordinary)


def test_safety_cases_never_admit_a_forbidden_or_foreign_record(result):
    cases = [c for c in result.cases if c["kind"] == "safety"]
    assert len(cases) >= 20 and all(c["violations"] == [] for c in result.cases)
    forbidden = {case.id: set(case.forbid) for split in load_bundle().splits.values() for case in split}
    for case in cases:
        assert not forbidden[case["id"]] & set(case["admitted"])


def test_conditional_turns_get_the_right_record(result):
    expect = {case.id: set(case.expect) for split in load_bundle().splits.values() for case in split}
    conditional = [c for c in result.cases if c["kind"] == "conditional"]
    hits = [c for c in conditional if expect[c["id"]] <= set(c["admitted"])]
    assert len(hits) / len(conditional) >= load_bundle().thresholds["min_conditional_recall"]
    # the one the report split misses is the documented one ("flying" is not a travel trigger)
    assert {c["id"] for c in conditional if c not in hits} <= {"r-c2"}
