"""Pages of a list: every list in the app is paginated."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_core.service.admin_methods import RowsPage, page_bounds

__all__ = ["Page", "page_bounds", "paginate"]


@dataclass
class Page:
    """One page of ``items`` out of ``total`` (pages numbered from 1)."""

    items: list[Any]
    total: int
    page: int
    page_size: int

    @classmethod
    def of(cls, found: RowsPage) -> "Page":
        """A page of the service's paged lists."""
        return cls(list(found.rows), found.total, found.page, found.page_size)

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


def paginate(items: list[Any], page: int, page_size: int) -> Page:
    """Paginate an in-memory list."""
    page, offset = page_bounds(page, page_size, len(items))
    return Page(items[offset: offset + page_size], len(items), page, page_size)
