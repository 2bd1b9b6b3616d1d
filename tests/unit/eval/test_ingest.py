import numpy as np

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.eval.ingest import CachingEmbedder, ingest_conversation
from memory_core.eval.locomo import parse_conversation
from tests.fakes import HashingEmbedder
from tests.unit.eval.test_locomo import sample


def test_caching_embedder_serves_primed_texts_unchanged():
    inner = HashingEmbedder()
    cached = CachingEmbedder(inner, batch_size=2)
    assert cached.prime(["a b", "c d", "a b", "e"]) == 3
    out = cached.embed(["c d", "unseen words"])
    assert np.allclose(out, inner.embed(["c d", "unseen words"]))
    assert (cached.hits, cached.misses) == (1, 1)
    assert cached.model_name == inner.model_name and cached.dim == inner.dim


def test_turns_become_episodic_records_through_the_write_path(tmp_path):
    data = sample()
    data["conversation"]["session_2"].append({"speaker": "Ann", "dia_id": "D2:2", "text": "I adopted a cat."})
    conv = parse_conversation(data)
    clock = FixedClock("2023-01-01T00:00:00Z")
    service = MemoryService.open(tmp_path / "m.sqlite", load_settings(extraction={"extract_on_session_end": False}),
                                 clock=clock, embedder=HashingEmbedder())
    try:
        result = ingest_conversation(service, conv, clock)
        rows = service.store.query("SELECT id, type, source_kind, source_ref, event_at, scope_kind, scope_id FROM records ORDER BY seq")
        assert [r["source_ref"] for r in rows] == ["D1:1", "D1:2", "D2:1"]
        assert {r["type"] for r in rows} == {"episodic"} and {r["source_kind"] for r in rows} == {"user_statement"}
        assert {(r["scope_kind"], r["scope_id"]) for r in rows} == {("user", "conv-x")}
        assert rows[2]["event_at"].startswith("2023-05-25T09:00")
        # the repeated turn was reinforced into D1:1's record, and the map says so
        assert result.reinforced == 1 and result.merged_turns == ["D2:2"]
        assert result.turn_to_record["D2:2"] == result.turn_to_record["D1:1"] == rows[0]["id"]
        assert result.covers[rows[0]["id"]] == ["D1:1", "D2:2"]
        assert result.downgraded == 0
        assert service.store.scalar("SELECT COUNT(*) FROM write_log") == 4
    finally:
        service.close()


def test_caching_embedder_round_trips_its_vectors_through_a_file(tmp_path):
    cached = CachingEmbedder(HashingEmbedder())
    cached.prime(["alpha beta", "gamma"])
    cached.save(tmp_path / "v.npz")
    fresh = CachingEmbedder(HashingEmbedder())
    assert fresh.load(tmp_path / "v.npz") == 2
    assert np.allclose(fresh.embed(["gamma"]), cached.embed(["gamma"])) and fresh.hits == 1
    other = CachingEmbedder(HashingEmbedder())
    other.model_version = "2"
    assert other.load(tmp_path / "v.npz") == 0
    assert fresh.load(tmp_path / "missing.npz") == 0
