import multiprocessing as mp

import numpy as np
import pytest

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.index.ann import IvfBackend
from memory_core.index.exact import ExactBackend
from tests.fakes import HashingEmbedder


def unit(values):
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def _ivf(dim, capacity=1024):
    # Thresholds at their lowest so the approximate path answers even these tiny searches.
    return IvfBackend(dim, capacity, min_records=1, exact_below_allowed=0, nprobe=1, background=False)


BACKENDS = [pytest.param(ExactBackend, id="exact"), pytest.param(_ivf, id="faiss-ivf")]


@pytest.mark.parametrize("make", BACKENDS)
def test_backend_search_respects_mask_and_dead_rows(make):
    """The vector-index contract every backend passes."""
    backend = make(3, capacity=2)
    backend.upsert(10, unit([1, 0, 0]))
    backend.upsert(11, unit([0.9, 0.1, 0]))
    backend.upsert(12, unit([0, 1, 0]))  # forces growth past the initial capacity
    query = unit([1, 0, 0])
    assert [seq for seq, _ in backend.search(query, 2)] == [10, 11]
    allowed = np.array([False, True, True])
    assert [seq for seq, _ in backend.search(query, 2, allowed)] == [11, 12]
    backend.delete(10)
    assert [seq for seq, _ in backend.search(query, 3)] == [11, 12]
    assert backend.count() == 2
    assert abs(backend.search(query, 1)[0][1] - float(unit([0.9, 0.1, 0]) @ query)) < 1e-6
    assert backend.similarity(query, [10, 11, 99]) == {11: pytest.approx(float(unit([0.9, 0.1, 0]) @ query))}
    assert list(backend.seqs()) == [10, 11, 12] and backend.row_of(12) == 2
    short = np.array([False, True])  # a mask computed before the last row was added: that row is not allowed
    assert [seq for seq, _ in backend.search(query, 3, short)] == [11]
    backend.upsert(10, unit([0, 0, 1]))  # a deleted row can come back with a new vector
    assert [seq for seq, _ in backend.search(unit([0, 0, 1]), 1)] == [10]


def test_ivf_backend_reports_how_it_answered_and_falls_back_to_exact():
    backend = IvfBackend(3, min_records=2, exact_below_allowed=1, nprobe=1, background=False)
    backend.upsert(1, unit([1, 0, 0]))
    backend.search(unit([1, 0, 0]), 1)
    assert backend.last_search["method"] == "exact" and "not built" in backend.last_search["why"]
    backend.upsert(2, unit([0, 1, 0]))
    backend.upsert(3, unit([0, 0, 1]))
    assert backend.wait_until_built()
    assert backend.search(unit([1, 0, 0]), 1)[0][0] == 1 and backend.last_search["method"] == "approximate"
    only_one = np.array([True, False, False])
    assert backend.search(unit([0, 1, 0]), 1, only_one) == [(1, 0.0)]
    assert backend.last_search["method"] == "exact" and "1 allowed rows" in backend.last_search["why"]


def test_a_service_above_the_threshold_uses_the_approximate_index_and_says_so(tmp_path, clock):
    settings = load_settings(retrieval={"ann_min_records": 3, "ann_exact_below_allowed": 0})
    with MemoryService.open(tmp_path / "m.sqlite", settings, clock=clock, embedder=HashingEmbedder()) as service:
        service.grant("a", "user:u", read=True, write=True, actor="t")
        session = service.start_session(agent_id="a", user_id="u")
        for i, text in enumerate(["red apples", "green pears", "blue plums", "yellow lemons"]):
            session.call_tool("memory_write", {"type": "semantic", "content": f"The user likes {text}.", "attribute": f"fruit{i}"})
        assert service.index.backend.wait_until_built(60)
        response = service.search(agent_id="a", user_id="u", query="green pears")
        assert response.explanation.dense_index["method"] == "approximate"
        assert response.trace.stage("dense").outputs["index"]["rescored"] == "exact cosine"
        assert "pears" in response.results[0].content


def test_index_mask_filters_scope_status_and_type(alice, service):
    alice.call_tool("memory_write", {"type": "semantic", "content": "The user plays cello.", "attribute": "instrument"})
    alice.call_tool("memory_write", {"type": "episodic", "content": "The user played a concert.", "event_at": "2026-02-01"})
    index = service.index
    assert index.mask(["user:alice"], ("provisional", "confirmed")).sum() == 2
    assert index.mask(["user:alice"], ("provisional", "confirmed"), ["episodic"]).sum() == 1
    assert index.mask(["user:bob"], ("provisional", "confirmed")).sum() == 0
    assert index.mask(["user:alice"], ("superseded",)).sum() == 0
    from memory_core.clock import epoch

    assert index.mask(["user:alice"], ("provisional", "confirmed"), None, epoch("2026-01-15"), epoch("2026-02-15")).sum() == 1


def test_a_forgotten_records_row_leaves_the_mask(alice, service):
    """A forgotten record's row is dead in the backend; the hard filter's mask must not count it either
    (it set the lexical statistics' readable total and the trace's readable count: a store where a
    record was forgotten scored searches differently from one where it never existed)."""
    kept = alice.call_tool("memory_write", {"type": "semantic", "content": "The user plays cello.", "attribute": "instrument"})
    gone = alice.call_tool("memory_write", {"type": "semantic", "content": "The user keeps bees.", "attribute": "hobby"})
    assert kept["ok"] and gone["ok"]
    assert alice.call_tool("memory_forget", {"record_id": gone["record_id"], "reason": "asked"})["ok"]
    assert service.index.mask(["user:alice"], ("provisional", "confirmed")).sum() == 1
    assert service.index.mask(["user:alice"], ("provisional", "confirmed", "superseded", "expired")).sum() == 1


def test_rebuild_matches_incremental_state(alice, service, tmp_path, clock):
    for i, text in enumerate(["red apples", "green pears", "blue plums"]):
        alice.call_tool("memory_write", {"type": "semantic", "content": f"The user likes {text}.", "attribute": f"fruit{i}"})
    query = service.embedder.embed(["green pears"])[0]
    before = service.index.search(query, 3)
    fresh = MemoryService.open(service.store.path, load_settings(), clock=clock, embedder=HashingEmbedder())
    assert fresh.index.search(query, 3) == before
    fresh.close()


def _writer(path: str, ready, go) -> None:
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    session = service.start_session(agent_id="assistant", user_id="alice")
    ready.set()
    go.wait(30)
    result = session.call_tool("memory_write", {"type": "semantic", "content": "The user owns a sailboat called Petrel.", "attribute": "boat"})
    assert result["ok"], result
    service.close()


def test_another_process_write_is_visible_to_the_next_search(service, alice):
    ctx = mp.get_context("spawn")
    ready, go = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_writer, args=(str(service.store.path), ready, go))
    proc.start()
    assert ready.wait(120)
    query = service.embedder.embed(["sailboat called Petrel"])[0]

    def alices():  # the filter of a search of alice's live records (PostgreSQL: its SQL, with the records version)
        return service.index.mask(["user:alice"], ("provisional", "confirmed"))

    assert service.index.search(query, 5, alices()) == []
    go.set()
    proc.join(120)
    assert proc.exitcode == 0
    # This process has not re-read anything yet. SQLite: refresh applies the delta by version;
    # PostgreSQL: the search loads its matrix, or catches it up from the change feed when the records
    # version read with the filter's count is past the matrix's (tests/contract/test_pg_matrix.py)
    applied = service.index.refresh()
    if service.store.backend == "sqlite":
        assert applied >= 1
    hits, how = service.index.search_explained(query, 5, alices())
    if service.store.backend == "postgresql":
        assert how["engine"] == "matrix"
    assert len(hits) == 1
    seq = hits[0][0]
    assert service.store.scalar("SELECT content FROM records WHERE seq = ?", (seq,)) == "The user owns a sailboat called Petrel."
