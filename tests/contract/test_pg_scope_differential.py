"""On PostgreSQL's approximate (IVF) path, nothing a principal sees depends on records it cannot read.

Two stores on a real PostgreSQL server differ only in another user's records, which the searching
principal has no grant on. Both have the IVF index, and every search is forced onto it
(``exact_max_rows`` 0). With as many probes as lists the index scan visits every list, so the
results must be identical, score for score, and the explanation must name the index. With one
probe (the approximate case proper) the other user's records, written to sit next to the
principal's, must still never come back: the filter is in the same WHERE clause as the index scan.
"""

import pytest

from memory_core import FixedClock, MemoryService, load_settings
from tests.fakes import HashingEmbedder
from tests.property.test_scope_differential import _first_difference, _view

MINE = [f"Note: {topic} plans with Priya for week {i}." for i, topic in
        enumerate(["garden tulips", "jazz concert", "Lisbon trip", "budget review", "dentist visit", "marathon training"] * 4)]
THEIRS = [f"Note: {topic} plans with Priya for week {i}, private to bob." for i, topic in
          enumerate(["garden tulips", "jazz concert", "Lisbon trip", "divorce lawyer", "penicillin allergy"] * 6)]


def _build(url: str, mine: list[str], theirs: list[str], probes: int) -> MemoryService:
    settings = load_settings(postgres={"ann_min_records": 10, "exact_max_rows": 0, "ivf_probes": probes,
                                       "dense_search": "sql"})
    service = MemoryService.open(url, settings, clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    service.grant("other", "user:bob", read=True, write=True, actor="t")
    alice = service.start_session(agent_id="assistant", user_id="alice")
    bob = service.start_session(agent_id="other", user_id="bob")
    pending = list(enumerate(theirs))
    for i, text in enumerate(mine):
        assert alice.call_tool("memory_write", {"type": "semantic", "content": text, "attribute": f"a{i}"})["ok"]
        if pending:
            j, other = pending.pop(0)
            assert bob.call_tool("memory_write", {"type": "semantic", "content": other, "attribute": f"b{j}"})["ok"]
    for j, other in pending:
        assert bob.call_tool("memory_write", {"type": "semantic", "content": other, "attribute": f"b{j}"})["ok"]
    service.index._maybe_build_ann(wait=True)
    assert service.index.has_ann()
    return service


@pytest.mark.parametrize("query", ["garden tulips with Priya", "jazz concert plans", "divorce lawyer", "Lisbon"])
def test_two_stores_differing_only_in_unreadable_records_answer_alike_on_the_ivf_path(new_target, query):
    alone = _build(new_target("postgresql"), MINE, [], probes=10_000)
    crowded = _build(new_target("postgresql"), MINE, THEIRS, probes=10_000)
    try:
        a, b = _view(alone, query), _view(crowded, query)
        assert a == b, f"{query}: {_first_difference(a, b)}"
        dense = next(s for s in a["stages"] if s["name"] == "dense")
        assert dense["outputs"]["index"]["method"] == "approximate"
        assert dense["outputs"]["index"]["index"] == "records_embedding_ivf"
    finally:
        alone.close()
        crowded.close()


def test_one_probe_never_returns_an_unreadable_record(new_target):
    crowded = _build(new_target("postgresql"), MINE, THEIRS, probes=1)
    try:
        bobs = {r[0] for r in crowded.store.query("SELECT id FROM records WHERE scope_id = 'bob'")}
        for query in ["garden tulips with Priya, private to bob", "divorce lawyer", "penicillin allergy week 3"]:
            response = crowded.search(agent_id="assistant", user_id="alice", query=query)
            dense = response.trace.stage("dense").outputs
            assert dense["index"]["method"] == "approximate"
            proposed = {c["id"] for s in response.trace.stages if isinstance(s.outputs, dict)
                        for c in s.outputs.get("candidates", [])}
            assert not proposed & bobs and not {r.record_id for r in response.results} & bobs
    finally:
        crowded.close()
