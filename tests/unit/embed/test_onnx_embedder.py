"""The ONNX Runtime embedder: made from the packaged weights, same vectors and identity as torch."""

import json
from pathlib import Path

import numpy as np
import pytest

from memory_core import MemoryService, load_settings
from memory_core.embed import build_embedder
from memory_core.embed.onnx_export import cached_paths, valid_cached
from memory_core.errors import EmbedderUnavailableError
from memory_core.settings import EmbedderSettings

pytestmark = pytest.mark.model

VARIED = [
    "I prefer concise answers.",
    "Où est la gare ? Zoë, naïve café, crème brûlée.",
    "日本語のテキストと中文文本，还有한국어.",
    "emoji 🎉🚀🍕 and symbols ∑∫√ ©®",
    "עברית وعربي mixed with English",
    "PR-1234 v2.3.1 auth/token.py::refresh() -> 0x7fff",
    "a",
    "   ",
    "The user keeps bees in the garden and sells honey at the Saturday market. " * 60,  # far past 256 tokens
    "word " * 255,
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module")
def onnx_embedder(cache_dir):
    return build_embedder(EmbedderSettings(runtime="onnx", onnx_cache_dir=str(cache_dir)))


@pytest.fixture(scope="module")
def torch_embedder():
    return build_embedder(EmbedderSettings(runtime="torch"))


def test_onnx_vectors_equal_the_torch_vectors(onnx_embedder, torch_embedder):
    assert onnx_embedder.runtime == "onnxruntime"
    got, expected = onnx_embedder.embed(VARIED), torch_embedder.embed(VARIED)
    assert got.shape == expected.shape == (len(VARIED), 384) and got.dtype == np.float32
    assert np.min(np.sum(got * expected, axis=1)) >= 0.9999
    one_by_one = np.stack([onnx_embedder.embed([t])[0] for t in VARIED])  # padding in a batch changes nothing
    assert np.min(np.sum(one_by_one * got, axis=1)) >= 0.9999
    assert onnx_embedder.embed([]).shape == (0, 384)


def test_the_onnx_embedder_has_the_torch_identity(onnx_embedder, torch_embedder):
    assert (onnx_embedder.model_name, onnx_embedder.model_version, onnx_embedder.dim) == (
        torch_embedder.model_name, torch_embedder.model_version, torch_embedder.dim)


def test_the_file_is_cached_checked_and_reused(onnx_embedder, cache_dir):
    onnx_path, meta_path = cached_paths(cache_dir, onnx_embedder.model_version, 256)
    assert onnx_embedder.onnx_path == onnx_path
    meta = json.loads(meta_path.read_text())
    assert meta["check"]["min_cosine"] >= 0.9999 and meta["check"]["texts"] >= 10
    stamp = onnx_path.stat().st_mtime_ns
    again = build_embedder(EmbedderSettings(runtime="onnx", onnx_cache_dir=str(cache_dir)))
    assert again.onnx_path.stat().st_mtime_ns == stamp  # loaded, not exported again


def test_a_changed_cache_file_is_not_trusted(onnx_embedder, cache_dir, tmp_path):
    onnx_path, meta_path = cached_paths(cache_dir, onnx_embedder.model_version, 256)
    copy_dir = tmp_path / "copy"
    copy_dir.mkdir()
    copy_onnx, copy_meta = cached_paths(copy_dir, onnx_embedder.model_version, 256)
    data = bytearray(onnx_path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy_onnx.write_bytes(bytes(data))
    import os

    stat = onnx_path.stat()
    os.utime(copy_onnx, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size and time: only the hash can tell
    copy_meta.write_text(meta_path.read_text())
    assert valid_cached(onnx_path, meta_path, onnx_embedder.model_version, full=True) is not None
    assert valid_cached(copy_onnx, copy_meta, onnx_embedder.model_version) is not None
    assert valid_cached(copy_onnx, copy_meta, onnx_embedder.model_version, full=True) is None
    copy_onnx.write_bytes(bytes(data))  # rewritten: a new modification time is noticed without hashing
    assert valid_cached(copy_onnx, copy_meta, onnx_embedder.model_version) is None
    assert valid_cached(onnx_path, meta_path, "another-version") is None


def test_a_store_built_with_torch_opens_with_onnx_without_a_reembed(tmp_path, clock, torch_embedder, onnx_embedder):
    path = tmp_path / "m.sqlite"
    with MemoryService.open(path, load_settings(), clock=clock, embedder=torch_embedder) as service:
        service.grant("a", "user:u", read=True, write=True, actor="t")
        session = service.start_session(agent_id="a", user_id="u")
        session.call_tool("memory_write", {"type": "semantic", "content": "The user keeps bees.", "attribute": "hobby"})
        before = service.search(agent_id="a", user_id="u", query="beekeeping hobby")
    with MemoryService.open(path, load_settings(), clock=clock, embedder=onnx_embedder) as service:
        after = service.search(agent_id="a", user_id="u", query="beekeeping hobby")
        assert service.store.scalar("SELECT COUNT(*) FROM events WHERE kind = 'store.reembedded'") == 0
    assert after.record_ids == before.record_ids
    assert after.results[0].explanation.cosine == pytest.approx(before.results[0].explanation.cosine, abs=1e-4)
    assert after.trace.stage("query_embedding").outputs["runtime"] == "onnxruntime"


def test_onnx_requested_but_impossible_is_a_clear_error_and_auto_falls_back(tmp_path, caplog):
    bare = tmp_path / "not-a-model"
    bare.mkdir()
    with pytest.raises(EmbedderUnavailableError):
        build_embedder(EmbedderSettings(runtime="onnx", model_path=str(bare), onnx_cache_dir=str(tmp_path / "c")))
    # auto: the ONNX path fails on this directory, so the torch loader is tried (and fails too,
    # with its own error): the fallback is attempted and logged, never silent.
    with pytest.raises(Exception):
        build_embedder(EmbedderSettings(runtime="auto", model_path=str(bare), onnx_cache_dir=str(tmp_path / "c")))
    assert "ONNX embedder unavailable" in caplog.text


def _build_in_process(cache_dir: str, out) -> None:
    from memory_core.embed import build_embedder
    from memory_core.settings import EmbedderSettings

    embedder = build_embedder(EmbedderSettings(runtime="onnx", onnx_cache_dir=cache_dir))
    out.put((str(embedder.onnx_path), embedder.embed(["two processes at once"])[0].tolist()))


def test_two_processes_making_the_file_at_once_both_get_the_same_checked_file(tmp_path):
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_build_in_process, args=(str(tmp_path), out)) for _ in range(2)]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    assert results[0][0] == results[1][0]
    assert np.allclose(results[0][1], results[1][1])
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".export.lock") == sorted(
        [Path(results[0][0]).name, Path(results[0][0]).with_suffix(".json").name])  # no stray temporary file
