"""Embedders, chosen from settings by :func:`build_embedder`."""

from __future__ import annotations

from ..settings import EmbedderSettings
from .base import Embedder, normalise


def build_embedder(settings: EmbedderSettings) -> Embedder:
    """Load the embedder the settings name (the model stays loaded in this object)."""
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


__all__ = ["Embedder", "build_embedder", "normalise"]
