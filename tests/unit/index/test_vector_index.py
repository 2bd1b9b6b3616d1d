import multiprocessing as mp

import numpy as np

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.index.exact import ExactBackend
from tests.fakes import HashingEmbedder


def unit(values):
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_exact_backend_search_respects_mask_and_dead_rows():
    backend = ExactBackend(3, capacity=2)
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
    assert service.index.search(query, 5) == []
    go.set()
    proc.join(120)
    assert proc.exitcode == 0
    # This process has not re-read anything yet; refresh applies the delta by version.
    applied = service.index.refresh()
    assert applied >= 1
    hits = service.index.search(query, 5)
    assert len(hits) == 1
    seq = hits[0][0]
    assert service.store.scalar("SELECT content FROM records WHERE seq = ?", (seq,)) == "The user owns a sailboat called Petrel."
