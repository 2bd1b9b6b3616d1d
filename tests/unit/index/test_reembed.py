"""Re-embedding (index/reembed.py): the explicit migration to another embedder."""

import json

import pytest

from memory_core import MemoryService
from memory_core.errors import EmbedderMismatchError
from tests.fakes import HashingEmbedder
from tests.helpers import write


class WiderEmbedder(HashingEmbedder):
    model_name = "test/wider-hashing-embedder"


def test_reembed_moves_every_live_record_to_the_new_model(tmp_path, clock, settings):
    path = tmp_path / "m.sqlite"
    with MemoryService.open(path, settings, clock=clock, embedder=HashingEmbedder()) as service:
        service.grant("assistant", "user:alice", read=True, write=True, actor="test")
        session = service.start_session(agent_id="assistant", user_id="alice")
        ids = [write(session, f"The user keeps {n} bees.", attribute=f"bees_{n}") for n in ("two", "three")]
        service.forget(ids[0], actor="test", reason="asked")
    with pytest.raises(EmbedderMismatchError):
        MemoryService.open(path, settings, clock=clock, embedder=WiderEmbedder(96))
    with MemoryService.open(path, settings, clock=clock, embedder=WiderEmbedder(96), allow_embedder_mismatch=True) as service:
        seen = []
        assert service.reembed(actor="ops", batch_size=1, progress=lambda done, total: seen.append((done, total))) == 1
        assert seen == [(1, 1)]
        assert service.store.get_meta("embed_model") == "test/wider-hashing-embedder" and service.store.get_meta("embed_dim") == "96"
        row = service.store.query_one("SELECT embed_model, embed_dim FROM records WHERE id = ?", (ids[1],))
        assert tuple(row) == ("test/wider-hashing-embedder", 96) and service.index.count() == 1
        event = service.store.query_one("SELECT actor, payload FROM events WHERE kind = 'store.reembedded'")
        assert event["actor"] == "ops" and json.loads(event["payload"])["records"] == 1
    with MemoryService.open(path, settings, clock=clock, embedder=WiderEmbedder(96)) as service:  # no mismatch any more
        assert service.search(agent_id="assistant", user_id="alice", query="three bees").record_ids == [ids[1]]
