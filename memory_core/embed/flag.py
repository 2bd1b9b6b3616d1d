"""bge-m3 dense vectors through FlagEmbedding, from a local model directory.

The design's production default. Weights are never downloaded: ``embedder.model_path`` must point
at a directory holding the model (config, tokenizer and weights).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from ..errors import EmbedderUnavailableError
from .base import normalise
from .sentence import model_dir_version

BGE_M3_NAME = "BAAI/bge-m3"


class FlagDenseEmbedder:
    """Dense head of a BGE-M3-style model loaded with ``FlagEmbedding.BGEM3FlagModel``."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        max_seq_length: int = 512,
        use_fp16: bool = False,
        model_name: str = BGE_M3_NAME,
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        if not model_path:
            raise EmbedderUnavailableError("bge-m3 needs embedder.model_path set to a local model directory")
        path = Path(model_path)
        if not path.is_dir():
            raise EmbedderUnavailableError(f"model directory {path} does not exist", path=str(path))
        from ..extras import install_hint, missing_modules

        if missing_modules(["FlagEmbedding"]):
            raise EmbedderUnavailableError(f"the bge-m3 embedder cannot run without FlagEmbedding, which is not installed: {install_hint('bge')}",
                                           extra="bge")
        try:
            from FlagEmbedding import BGEM3FlagModel
        except ImportError as exc:
            raise EmbedderUnavailableError(f"FlagEmbedding cannot be imported: {exc}") from exc
        self._model = BGEM3FlagModel(str(path), use_fp16=use_fp16, devices=device)
        self._lock = threading.Lock()
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self.model_name = model_name
        self.model_version = model_dir_version(path)
        self.dim = int(self.embed(["probe"]).shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        with self._lock:
            out = self._model.encode(
                list(texts),
                batch_size=self.batch_size,
                max_length=self.max_seq_length,
                return_dense=True,
                return_sparse=False,
                return_colbert_vecs=False,
            )
        return normalise(np.asarray(out["dense_vecs"], dtype=np.float32))
