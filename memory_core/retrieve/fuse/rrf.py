"""Reciprocal-rank fusion: pure functions, tested directly and with hypothesis."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def tied_ranks(groups: Sequence[Hashable]) -> list[float]:
    """Fractional ranks for a list whose items come in tied groups: ``groups`` holds each position's
    group (equal groups adjacent), and every item gets the mean of the positions its group spans
    ([a, a, a, b] gives [2, 2, 2, 4]), so a tie moves no weight into or out of the list."""
    out: list[float] = []
    start = 0
    while start < len(groups):
        end = start
        while end + 1 < len(groups) and groups[end + 1] == groups[start]:
            end += 1
        out.extend([(start + end) / 2 + 1] * (end - start + 1))
        start = end + 1
    return out


def rrf_fuse(ranked: Mapping[str, Sequence[K]], k: float,
             ranks: Mapping[str, Sequence[float]] | None = None) -> list[tuple[K, float]]:
    """Reciprocal-rank fusion: each item scores the sum of 1/(k + rank) over the lists holding it.

    Ranks start at 1; ``ranks`` may give a list's ranks explicitly, one per position (tied items
    share one, :func:`tied_ranks`). Ties are broken by the item's best single rank, then by the
    number of lists holding it, then by the item itself, so the order never depends on the order of
    the lists.
    """
    if k <= 0:
        raise ValueError("the RRF constant must be positive")
    ranks = ranks or {}
    scores: dict[K, float] = {}
    best: dict[K, float] = {}
    hits: dict[K, int] = {}
    for name in sorted(ranked):  # a fixed summation order keeps float sums (and ties) identical
        items = ranked[name]
        given = ranks.get(name)
        if given is not None and len(given) != len(items):
            raise ValueError(f"list {name!r} has {len(items)} items but {len(given)} ranks")
        seen: set[K] = set()
        for position, item in enumerate(items, start=1):
            rank = given[position - 1] if given is not None else position
            if item in seen:
                continue  # a list naming an item twice counts it once, at its better rank
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
            best[item] = min(best.get(item, rank), rank)
            hits[item] = hits.get(item, 0) + 1
    order = sorted(scores, key=lambda item: (-scores[item], best[item], -hits[item], item))
    return [(item, scores[item]) for item in order]
