"""Embedders, chosen from settings by :func:`build_embedder`."""

from __future__ import annotations

import logging

from ..errors import EmbedderUnavailableError
from ..settings import EmbedderSettings
from .base import Embedder, normalise
from .cache import QueryVectorCache

log = logging.getLogger(__name__)


def build_embedder(settings: EmbedderSettings) -> Embedder:
    """Load the embedder the settings name (the model stays loaded in this object).

    For the packaged MiniLM, ``runtime`` picks ONNX Runtime (``onnx``), sentence-transformers
    (``torch``, the reference path) or ``auto``: ONNX Runtime when it is installed and its file
    can be made and passes the check against torch, otherwise sentence-transformers, with a
    warning saying why. Other models always use their torch-based loaders.
    """
    if settings.onnx_precision != "fp32" and (settings.kind != "minilm" or settings.runtime == "torch"):
        raise EmbedderUnavailableError(f"onnx_precision {settings.onnx_precision} needs the MiniLM on the ONNX runtime")
    if settings.kind == "minilm" and settings.runtime in ("auto", "onnx"):
        try:
            from .onnx import OnnxMiniLMEmbedder

            return OnnxMiniLMEmbedder(
                settings.model_path, cache_dir=settings.onnx_cache_dir, threads=settings.onnx_threads,
                batch_size=settings.batch_size, max_seq_length=settings.max_seq_length, precision=settings.onnx_precision,
            )
        except (EmbedderUnavailableError, ImportError) as exc:
            # The int8 model is another model version: falling back to the fp32 torch path would
            # silently change the store's model, so that is an error, not a fallback.
            if settings.runtime == "onnx" or settings.onnx_precision != "fp32":
                raise EmbedderUnavailableError(f"the ONNX embedder is unavailable: {exc}") from exc
            log.warning("ONNX embedder unavailable (%s); using sentence-transformers", exc)
    if settings.torch_threads:
        import torch

        torch.set_num_threads(settings.torch_threads)
    if settings.kind == "bge-m3":
        from .flag import FlagDenseEmbedder

        return FlagDenseEmbedder(
            settings.model_path or "",
            device=settings.device,
            batch_size=settings.batch_size,
            max_seq_length=settings.max_seq_length,
            use_fp16=settings.use_fp16,
        )
    from .sentence import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(
        settings.model_path,
        device=settings.device,
        batch_size=settings.batch_size,
        max_seq_length=settings.max_seq_length,
    )


def embedder_runtime(embedder) -> str:
    """How an embedder runs its model (``onnxruntime``, ``torch`` or the class name), for explanations."""
    return getattr(embedder, "runtime", None) or type(embedder).__name__


__all__ = ["Embedder", "QueryVectorCache", "build_embedder", "embedder_runtime", "normalise"]
