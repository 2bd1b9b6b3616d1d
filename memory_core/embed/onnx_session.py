"""Tokenizer plus ONNX Runtime session for a graph whose output is the pooled unit vector.

Shared by the ONNX embedder (:mod:`.onnx`) and the check made when the file is created
(:mod:`.onnx_export`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import EmbedderUnavailableError


class OnnxSession:
    """Tokenizer plus ONNX Runtime session for a graph whose output is the pooled unit vector."""

    def __init__(self, onnx_path: str | Path, model_dir: str | Path, max_seq_length: int, *, threads: int = 1) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderUnavailableError(f"onnxruntime or tokenizers cannot be imported: {exc}") from exc
        tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=max_seq_length)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tokenizer
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Idle worker threads would otherwise spin for a while after each call, stealing a core
        # from the rest of the process on a small shared machine.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self.max_seq_length = max_seq_length

    def embed(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Unit vectors for ``texts``, batched by similar length to keep padding small."""
        out: np.ndarray | None = None
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            encodings = self._tokenizer.encode_batch([texts[i] for i in chunk])
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            vectors = self._session.run(None, feed)[0]
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[chunk] = vectors
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)
