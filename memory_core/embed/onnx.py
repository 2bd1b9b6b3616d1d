"""The packaged MiniLM run with ONNX Runtime: the default embedder when onnxruntime is installed.

Same model, same vectors, less overhead: a one-query forward pass through ONNX Runtime on one
thread takes about a third of the sentence-transformers call (see benchmarks/README.md), and the
process never imports torch once the ONNX file is cached. The file is made from the packaged
weights on first use (or ahead of time with ``agent-memory prepare-embedder``) and checked against
the torch vectors before it is used (:mod:`.onnx_export`). Because the vectors are the same to
cosine 0.9999, the embedder reports the same model name and version as the sentence-transformers
path, so a store built with one opens with the other without a re-embed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import EmbedderUnavailableError
from .base import normalise
from .onnx_export import default_cache_dir, export_and_check
from .onnx_int8 import INT8_SUFFIX, quantized_and_checked
from .onnx_session import OnnxSession
from .sentence import MINILM_NAME, model_dir_version, offline_model_dir


class OnnxMiniLMEmbedder:
    """The packaged all-MiniLM-L6-v2 through ONNX Runtime, with the sentence-transformers identity."""

    runtime = "onnxruntime"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        cache_dir: str | Path | None = None,
        threads: int = 1,
        verify_hash: bool = False,
        batch_size: int = 32,
        max_seq_length: int = 256,
        model_name: str = MINILM_NAME,
        precision: str = "fp32",
    ) -> None:
        path = offline_model_dir(model_path)
        if not (path / "tokenizer.json").is_file():
            raise EmbedderUnavailableError(f"{path} has no tokenizer.json for the ONNX embedder", path=str(path))
        # sentence-transformers caps the model's own limit the same way (its config says 256).
        max_seq_length = min(max_seq_length, _configured_max_length(path))
        self.model_name = model_name
        self.model_version = model_dir_version(path)
        self.onnx_path, self.export_info = export_and_check(
            path, Path(cache_dir) if cache_dir else default_cache_dir(), self.model_version, max_seq_length,
            verify_hash=verify_hash,
        )
        if precision == "int8":  # another model version: a store must be re-embedded to use it
            self.onnx_path, self.export_info = quantized_and_checked(
                self.onnx_path, path, Path(cache_dir) if cache_dir else default_cache_dir(), self.model_version, max_seq_length,
                verify_hash=verify_hash,
            )
            self.model_version += INT8_SUFFIX
        elif precision != "fp32":
            raise EmbedderUnavailableError(f"unknown ONNX precision {precision!r} (fp32 or int8)")
        self.precision = precision
        self._session = OnnxSession(self.onnx_path, path, max_seq_length, threads=threads)
        # int8 quantises activations with one scale per call, so a text's vector would depend on
        # the texts batched with it (cosine 0.97-0.997 to its vector alone); one text per call
        # keeps every text's vector the same however it is embedded.
        self.batch_size = 1 if precision == "int8" else batch_size
        self.dim = int(self._session.embed(["probe"]).shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # ONNX Runtime sessions are safe to run from several threads; no lock needed.
        return normalise(self._session.embed(list(texts), self.batch_size))


def _configured_max_length(path: Path) -> int:
    import json

    config = path / "sentence_bert_config.json"
    try:
        return int(json.loads(config.read_text()).get("max_seq_length") or 512)
    except (OSError, ValueError):
        return 512
