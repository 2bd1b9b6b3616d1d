"""The search log, write log and event log: filtered pages and single entries."""

from __future__ import annotations

from memory_core.service.admin_methods import LogFilter

from .pagination import Page

__all__ = ["LogFilter"]


def search_log(service, flt: LogFilter, page: int = 1, page_size: int = 50) -> Page:
    """One page of the search log, newest first, each row with its result count."""
    return Page.of(service.search_log_page(flt, page=page, page_size=page_size))


def write_log(service, flt: LogFilter, page: int = 1, page_size: int = 50) -> Page:
    """One page of the write log, newest first."""
    return Page.of(service.write_log_page(flt, page=page, page_size=page_size))


def event_log(service, flt: LogFilter, page: int = 1, page_size: int = 50) -> Page:
    """One page of the event log, newest first."""
    return Page.of(service.event_log_page(flt, page=page, page_size=page_size))


def log_entry(service, table: str, seq: int) -> dict | None:
    """One full log row with its JSON columns decoded (a search's trace expanded)."""
    return service.log_entry(table, seq)
