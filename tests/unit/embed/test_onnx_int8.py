"""The int8 MiniLM (embed/onnx_int8.py): made from the checked fp32 file, its own model version,
reachable only through the re-embed migration."""

import numpy as np
import pytest

from memory_core import MemoryService, load_settings
from memory_core.embed import build_embedder
from memory_core.embed.onnx_int8 import int8_paths
from memory_core.errors import EmbedderMismatchError, EmbedderUnavailableError
from memory_core.settings import EmbedderSettings

pytestmark = pytest.mark.model

TEXTS = ["I prefer concise answers.", "Zoë's café in Zürich", "東京で寿司を食べました。", "🎉 meeting moved", "x", "   ",
         "The user keeps bees in the garden. " * 80]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module")
def fp32(cache_dir):
    return build_embedder(EmbedderSettings(runtime="onnx", onnx_cache_dir=str(cache_dir)))


@pytest.fixture(scope="module")
def int8(cache_dir, fp32):
    return build_embedder(EmbedderSettings(runtime="onnx", onnx_cache_dir=str(cache_dir), onnx_precision="int8"))


def test_int8_is_another_model_version_with_close_but_different_unit_vectors(fp32, int8):
    assert int8.model_name == fp32.model_name and int8.model_version == fp32.model_version + "-int8"
    a, b = fp32.embed(TEXTS), int8.embed(TEXTS)
    assert b.shape == a.shape == (len(TEXTS), 384) and b.dtype == np.float32
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(a * b, axis=1)
    assert cosines.min() > 0.85 and cosines.max() < 0.99999  # close, but not the fp32 vectors
    one_by_one = np.stack([int8.embed([t])[0] for t in TEXTS])
    # Dynamic quantisation scales activations per call: texts are embedded one per call, so a
    # text's vector does not depend on what it was embedded with.
    assert np.array_equal(one_by_one, b)
    assert np.array_equal(int8.embed(TEXTS[::-1])[::-1], b)


def test_the_int8_file_is_cached_with_its_check_and_reused(cache_dir, fp32, int8):
    onnx_path, meta_path = int8_paths(cache_dir, fp32.model_version, 256)
    assert int8.onnx_path == onnx_path and meta_path.is_file()
    assert int8.export_info["model_version"].endswith("-int8") and int8.export_info["check_against_fp32"]["min_cosine"] > 0.85
    assert onnx_path.stat().st_size < fp32.onnx_path.stat().st_size / 3
    stamp = onnx_path.stat().st_mtime_ns
    again = build_embedder(EmbedderSettings(runtime="onnx", onnx_cache_dir=str(cache_dir), onnx_precision="int8"))
    assert again.onnx_path.stat().st_mtime_ns == stamp


def test_a_store_moves_between_fp32_and_int8_only_by_reembedding(tmp_path, clock, fp32, int8):
    path = tmp_path / "m.sqlite"
    with MemoryService.open(path, load_settings(), clock=clock, embedder=fp32) as service:
        service.grant("a", "user:u", read=True, write=True, actor="t")
        session = service.start_session(agent_id="a", user_id="u")
        session.call_tool("memory_write", {"type": "semantic", "content": "The user keeps bees.", "attribute": "hobby"})
        before = service.search(agent_id="a", user_id="u", query="beekeeping hobby").record_ids
    with pytest.raises(EmbedderMismatchError):
        MemoryService.open(path, load_settings(), clock=clock, embedder=int8)
    with MemoryService.open(path, load_settings(), clock=clock, embedder=int8, allow_embedder_mismatch=True) as service:
        assert service.reembed(actor="ops") == 1
    with MemoryService.open(path, load_settings(), clock=clock, embedder=int8) as service:
        assert service.search(agent_id="a", user_id="u", query="beekeeping hobby").record_ids == before
        assert service.store.get_meta("embed_version") == int8.model_version


def test_int8_without_the_onnx_runtime_is_an_error_not_a_silent_fp32_model():
    with pytest.raises(EmbedderUnavailableError, match="int8"):
        build_embedder(EmbedderSettings(runtime="torch", onnx_precision="int8"))
    with pytest.raises(EmbedderUnavailableError, match="int8"):
        build_embedder(EmbedderSettings(kind="bge-m3", model_path="/nonexistent", onnx_precision="int8"))
