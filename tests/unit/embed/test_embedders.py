import numpy as np
import pytest

from memory_core import MemoryService
from memory_core.errors import EmbedderMismatchError, EmbedderUnavailableError
from memory_core.settings import EmbedderSettings
from tests.fakes import HashingEmbedder

pytestmark = pytest.mark.model


def test_packaged_minilm_loads_offline_and_returns_unit_vectors():
    from memory_core.service import shared_embedder

    embedder = shared_embedder(EmbedderSettings())
    vectors = embedder.embed(["I prefer concise answers.", "Keep replies short.", "The Eiffel tower is in Paris."])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert embedder.model_name == "sentence-transformers/all-MiniLM-L6-v2" and len(embedder.model_version) == 12


def test_flagembedding_code_path_loads_a_local_model_directory():
    from memory_core.embed import build_embedder
    from memory_core.embed.sentence import packaged_minilm_dir

    # bge-m3 weights cannot be downloaded here; the packaged MiniLM directory exercises the same
    # FlagEmbedding loading and encoding code.
    embedder = build_embedder(EmbedderSettings(kind="bge-m3", model_path=str(packaged_minilm_dir())))
    vectors = embedder.embed(["hello world", "greetings, planet"])
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_bge_without_a_local_path_is_a_clear_error(tmp_path):
    from memory_core.embed import build_embedder

    with pytest.raises(EmbedderUnavailableError):
        build_embedder(EmbedderSettings(kind="bge-m3"))
    with pytest.raises(EmbedderUnavailableError):
        build_embedder(EmbedderSettings(kind="bge-m3", model_path=str(tmp_path / "missing")))


def test_reembed_is_the_explicit_migration_between_models(tmp_path, clock, settings):
    path = tmp_path / "m.sqlite"
    with MemoryService.open(path, settings, clock=clock, embedder=HashingEmbedder()) as service:
        service.grant("a", "user:u", read=True, write=True, actor="t")
        session = service.start_session(agent_id="a", user_id="u")
        session.call_tool("memory_write", {"type": "semantic", "content": "The user keeps bees.", "attribute": "hobby"})
    with pytest.raises(EmbedderMismatchError):
        MemoryService.open(path, settings, clock=clock)
    with MemoryService.open(path, settings, clock=clock, allow_embedder_mismatch=True) as service:
        assert service.reembed(actor="test") == 1
        assert service.index.count() == 1
        row = service.store.query_one("SELECT embed_model, embed_dim FROM records")
        assert (row["embed_model"], row["embed_dim"]) == ("sentence-transformers/all-MiniLM-L6-v2", 384)
    with MemoryService.open(path, settings, clock=clock) as service:
        query = service.embedder.embed(["beekeeping"])[0]
        assert service.index.search(query, 1)[0][1] > 0.3
