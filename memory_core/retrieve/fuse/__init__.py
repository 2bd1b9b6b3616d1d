"""Fusion: the generators' lists fused by reciprocal rank (pure arithmetic in :mod:`.rrf`)."""

from .rrf import rrf_fuse, tied_ranks
from .stage import FusionStage, fusion_lists

__all__ = ["FusionStage", "fusion_lists", "rrf_fuse", "tied_ranks"]
