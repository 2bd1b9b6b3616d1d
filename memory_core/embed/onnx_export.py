"""Producing the ONNX file of a local sentence-transformers BERT model (MiniLM), and checking it.

The file is made here, from the weights already on disk, never downloaded: the transformer and
its mean pooling and L2 normalisation are traced with torch's ONNX exporter into one graph whose
output is the final unit vector. Before the file is used it must reproduce the torch vectors of
:data:`CHECK_TEXTS` (cosine at least :data:`MIN_COSINE` for every text); only then is it moved into
the cache, with a JSON sidecar recording where it came from and what the check measured.

Creation needs torch and transformers; loading a cached file needs neither (see :mod:`.onnx`).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..errors import EmbedderUnavailableError

EXPORT_FORMAT = 1  # bump when the exported graph changes, so old cache files are not reused
OPSET = 17
MIN_COSINE = 0.9999

# Varied on purpose: short, punctuation, identifiers, accents, CJK, emoji, RTL, a text far past
# the truncation length, and whitespace-only input (which tokenises to just [CLS] [SEP]).
CHECK_TEXTS = (
    "I prefer concise answers.",
    "what did Priya decide about Atlas?",
    "PR-1234 fixed the v2.3.1 regression in auth/token.py",
    "Zoë's café in Zürich serves crème brûlée; naïve façade.",
    "東京で寿司を食べました。明日は京都へ行きます。",
    "Meeting moved 🎉🚀 to Friday — bring 🍕!",
    "مرحبا بكم في الاجتماع",
    "The user prefers concise technical answers and dislikes long preambles. " * 40,
    " ",
    "x",
)


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/agent-memory/onnx`` (``~/.cache/agent-memory/onnx`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agent-memory" / "onnx"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cached_paths(cache_dir: Path, model_version: str, max_seq_length: int) -> tuple[Path, Path]:
    """The ONNX file and its sidecar for one model version and truncation length."""
    stem = f"minilm-{model_version}-L{max_seq_length}-f{EXPORT_FORMAT}-fp32"
    return cache_dir / f"{stem}.onnx", cache_dir / f"{stem}.json"


@contextmanager
def _file_lock(path: Path):
    """An exclusive advisory lock, so two processes never export the same file at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def valid_cached(onnx_path: Path, meta_path: Path, model_version: str, *, full: bool = False) -> dict | None:
    """The sidecar if the cached file is complete and unchanged since its check, else None.

    Unchanged means same size and modification time as recorded when it was checked (cheap, so
    every process start can afford it); ``full`` also compares the SHA-256 (prepare-embedder does).
    """
    if not (onnx_path.is_file() and meta_path.is_file()):
        return None
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        return None
    if meta.get("model_version") != model_version or meta.get("export_format") != EXPORT_FORMAT:
        return None
    stat = onnx_path.stat()
    if meta.get("size") != stat.st_size or meta.get("mtime_ns") != stat.st_mtime_ns:
        return None
    if full and meta.get("sha256") != sha256_file(onnx_path):
        return None
    return meta


def export_and_check(model_dir: Path, cache_dir: Path, model_version: str, max_seq_length: int, *,
                     verify_hash: bool = False) -> tuple[Path, dict]:
    """Return the checked ONNX file for ``model_dir``, exporting it first if the cache lacks it.

    Raises EmbedderUnavailableError when torch is missing, the export fails, or the exported graph
    does not reproduce the torch vectors; nothing is left in the cache in those cases.
    """
    onnx_path, meta_path = cached_paths(cache_dir, model_version, max_seq_length)
    meta = valid_cached(onnx_path, meta_path, model_version, full=verify_hash)
    if meta is not None:
        return onnx_path, meta
    with _file_lock(cache_dir / ".export.lock"):
        meta = valid_cached(onnx_path, meta_path, model_version, full=verify_hash)  # another process may have made it
        if meta is not None:
            return onnx_path, meta
        fd, tmp_name = tempfile.mkstemp(prefix=".export-", suffix=".onnx", dir=cache_dir)
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            _export(model_dir, tmp)
            check = compare_with_torch(model_dir, tmp, max_seq_length)
            if check["min_cosine"] < MIN_COSINE:
                raise EmbedderUnavailableError(
                    f"the exported ONNX graph does not reproduce the torch vectors (min cosine "
                    f"{check['min_cosine']:.6f} < {MIN_COSINE})", min_cosine=check["min_cosine"],
                )
            import torch

            meta = {
                "model_version": model_version, "export_format": EXPORT_FORMAT, "opset": OPSET,
                "max_seq_length": max_seq_length, "torch": torch.__version__, "source": str(model_dir),
                "size": tmp.stat().st_size, "sha256": sha256_file(tmp), "check": check,
            }
            return publish_checked(tmp, onnx_path, meta_path, meta)
        finally:
            tmp.unlink(missing_ok=True)


def publish_checked(tmp: Path, onnx_path: Path, meta_path: Path, meta: dict) -> tuple[Path, dict]:
    """Move a checked model file into the cache, then its sidecar: the sidecar is written last, so
    its presence means "this file was checked". Returns the path and the metadata."""
    os.chmod(tmp, 0o644)  # mkstemp makes it private; other users of the cache need to read it
    os.replace(tmp, onnx_path)
    meta["mtime_ns"] = onnx_path.stat().st_mtime_ns
    tmp_meta = meta_path.with_suffix(".json.tmp")
    tmp_meta.write_text(json.dumps(meta, indent=1))
    os.replace(tmp_meta, meta_path)
    return onnx_path, meta


def _export(model_dir: Path, out: Path) -> None:
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise EmbedderUnavailableError(f"making the ONNX file needs torch and transformers: {exc}") from exc

    class _Pooled(torch.nn.Module):
        """Transformer, attention-masked mean pooling and L2 normalisation, as sentence-transformers does."""

        def __init__(self, model) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    # Eager attention traces into plain MatMul/Softmax nodes that every ONNX Runtime build runs.
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True, attn_implementation="eager").eval()
    ids = torch.ones((2, 8), dtype=torch.long)
    axes = {"b": 0, "s": 1}
    dynamic = {name: {axes["b"]: "batch", axes["s"]: "tokens"} for name in ("input_ids", "attention_mask", "token_type_ids")}
    dynamic["embedding"] = {0: "batch"}
    try:
        with torch.no_grad():
            # The TorchScript-based exporter: the dynamo exporter of torch 2.13 produced a graph
            # with a duplicated output name for this model that ONNX Runtime refuses.
            torch.onnx.export(
                _Pooled(model), (ids, torch.ones_like(ids), torch.zeros_like(ids)), str(out),
                input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["embedding"],
                dynamic_axes=dynamic, opset_version=OPSET, dynamo=False,
            )
    except Exception as exc:  # the exporter raises many kinds; all mean "no usable file"
        raise EmbedderUnavailableError(f"exporting the model to ONNX failed: {type(exc).__name__}: {exc}") from exc


def compare_with_torch(model_dir: Path, onnx_path: Path, max_seq_length: int, texts=CHECK_TEXTS) -> dict:
    """Cosine between the ONNX vectors and sentence-transformers' vectors for ``texts``."""
    from sentence_transformers import SentenceTransformer

    from .onnx_session import OnnxSession

    reference = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    reference.max_seq_length = min(max_seq_length, reference.max_seq_length or max_seq_length)
    expected = reference.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    got = OnnxSession(onnx_path, model_dir, reference.max_seq_length, threads=1).embed(list(texts))
    cosines = np.sum(got * expected, axis=1)
    return {"texts": len(texts), "min_cosine": float(cosines.min()), "max_abs_diff": float(np.abs(got - expected).max())}
