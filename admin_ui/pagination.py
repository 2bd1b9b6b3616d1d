"""Pages of a list: every list in the app is paginated."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memory_core.store.db import Store
from memory_core.store.paging import Where, count_rows, select_page


@dataclass
class Page:
    """One page of ``items`` out of ``total`` (pages numbered from 1)."""

    items: list[Any]
    total: int
    page: int
    page_size: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.page_size))

    @property
    def first_index(self) -> int:
        return (self.page - 1) * self.page_size + 1 if self.total else 0

    @property
    def last_index(self) -> int:
        return min(self.total, self.page * self.page_size)

    def caption(self, noun: str = "rows") -> str:
        if not self.total:
            return f"No {noun}."
        return f"{noun.capitalize()} {self.first_index}–{self.last_index} of {self.total} (page {self.page} of {self.pages})"


def page_bounds(page: int, page_size: int, total: int) -> tuple[int, int]:
    """Clamp ``page`` to the pages that exist; returns (page, offset)."""
    pages = max(1, -(-total // page_size))
    page = min(max(1, int(page)), pages)
    return page, (page - 1) * page_size


def paginate(items: list[Any], page: int, page_size: int) -> Page:
    """Paginate an in-memory list."""
    page, offset = page_bounds(page, page_size, len(items))
    return Page(items[offset: offset + page_size], len(items), page, page_size)


def query_page(store: Store, columns: str, source: str, where: Where, order_by: str, page: int, page_size: int,
               row: Callable[[Any], Any] = dict) -> Page:
    """One page of a filtered SQL list (``memory_core.store.paging``), with its total and clamped page number."""
    total = count_rows(store, source, where)
    page, offset = page_bounds(page, page_size, total)
    return Page([row(r) for r in select_page(store, columns, source, where, order_by, page_size, offset)], total, page, page_size)
