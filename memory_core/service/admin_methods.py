"""The admin app's half of the :class:`~memory_core.service.MemoryService` facade: lists, counts and
series for people browsing a store (docs/admin-app.md).

A mixin like :class:`~memory_core.service.ambient_methods.AmbientMethods`. Every method is a short
delegation to a named query in ``store/admin_reads.py``, ``store/admin_logs.py`` or
``store/overview.py``: read-only, with no policy applied (the app checks who may see what). The
app imports the filters and the vocabulary of its pickers from here too, so it never imports the
store itself (an import-linter contract in pyproject.toml keeps it so).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from ..clock import Clock
from ..extract import runs
from ..extract.temporal import resolve
from ..ingest.entity_resolution import ENTITY_KINDS
from ..retrieve.search_log import decode_row
from ..store import admin_logs, admin_reads, overview
from ..store.admin_logs import LogFilter
from ..store.admin_reads import EntityFilter, RecordFilter, RowsPage, page_bounds
from ..store.db import Store
from ..store.records import RECORD_TYPES, STATUSES, Record

# What the admin app takes from here besides the methods (so it never imports the store).
__all__ = ["AdminMethods", "ENTITY_KINDS", "EntityFilter", "LogFilter", "RECORD_STATUSES", "RECORD_TYPES", "Record",
           "RecordFilter", "RowsPage", "page_bounds"]
RECORD_STATUSES = STATUSES
LOGS = ("search_log", "write_log", "events")


class AdminMethods:
    """Read-only lists and counts behind the admin app's pages."""

    # Provided by MemoryService.
    store: Store
    clock: Clock

    # -- records, scopes and principals ----------------------------------------------------------

    def browse_records(self, flt: RecordFilter, *, page: int = 1, page_size: int = 50, order: str = "newest") -> RowsPage:
        """One page of records matching ``flt`` (``order``: ``newest`` or ``oldest`` first)."""
        return admin_reads.browse_records(self.store, flt, page, page_size, order)

    def record_facet(self, flt: RecordFilter, facet: str) -> dict[str, int]:
        """How many records each value of ``facet`` (scope, type, status, source_kind) has under ``flt``
        without its own condition on that facet."""
        return admin_reads.record_facet(self.store, flt, facet)

    def records_by_ids(self, ids: list[str]) -> dict[str, Record]:
        """The records with these ids, whatever their status (missing ids left out)."""
        return admin_reads.records_by_ids(self.store, list(ids))

    def distinct_values(self, table: str, column: str) -> list[str]:
        """The values a filter picker offers for one known column (e.g. ``events``, ``kind``)."""
        return admin_reads.distinct_values(self.store, table, column)

    def known_scopes(self, owner_user_id: str | None = None) -> list[str]:
        """Every scope holding a record or a grant (only a user's own scopes with ``owner_user_id``)."""
        return admin_reads.known_scopes(self.store, owner_user_id)

    def known_agents(self) -> list[str]:
        """Every agent id the store mentions."""
        return admin_reads.known_agents(self.store)

    def known_users(self) -> list[str]:
        """Every user id the store mentions."""
        return admin_reads.known_users(self.store)

    def session_info(self, session_id: str) -> dict | None:
        """One session's row (who, when, write targets), or None."""
        return admin_reads.session_row(self.store, session_id)

    # -- entities ---------------------------------------------------------------------------------

    def browse_entities(self, flt: EntityFilter, *, page: int = 1, page_size: int = 50) -> RowsPage:
        """One page of entities with their aliases and linked-record counts."""
        return admin_reads.browse_entities(self.store, flt, page, page_size)

    def entity_records(self, entity_id: str, *, page: int = 1, page_size: int = 50) -> RowsPage:
        """Records linked to an entity, newest first."""
        return admin_reads.entity_records(self.store, entity_id, page, page_size)

    def same_alias_elsewhere(self, entity_id: str) -> list[dict]:
        """Entities in other scopes sharing an alias with this one."""
        return admin_reads.same_alias_elsewhere(self.store, entity_id)

    def live_entities(self, scope: str | None = None) -> list[dict[str, Any]]:
        """Every live entity (optionally of one scope) with its aliases, for merge proposals."""
        return admin_reads.live_entities(self.store, scope)

    # -- logs, searches and sessions ----------------------------------------------------------------

    def search_log_page(self, flt: LogFilter, *, page: int = 1, page_size: int = 50) -> RowsPage:
        """One page of the search log, newest first."""
        return admin_logs.search_log_page(self.store, flt, page, page_size)

    def write_log_page(self, flt: LogFilter, *, page: int = 1, page_size: int = 50) -> RowsPage:
        """One page of the write log, newest first."""
        return admin_logs.write_log_page(self.store, flt, page, page_size)

    def event_log_page(self, flt: LogFilter, *, page: int = 1, page_size: int = 50) -> RowsPage:
        """One page of the event log, newest first."""
        return admin_logs.event_log_page(self.store, flt, page, page_size)

    def merges_for(self, record_id: str) -> list[dict[str, Any]]:
        """The entity merges that rewrote a record's links or subject, oldest first (their events)."""
        return admin_logs.record_merge_events(self.store, record_id)

    def log_entry(self, table: str, seq: int) -> dict | None:
        """One log row in full (``search_log``, ``write_log`` or ``events``), decoded, or None."""
        row = admin_logs.log_row(self.store, table, seq)
        if row is None:
            return None
        return decode_row(self.store, row) if table == "search_log" else admin_logs.decode_log_row(table, row)

    def recent_searches(self, limit: int = 50) -> list[dict[str, Any]]:
        """The latest logged searches."""
        return admin_logs.recent_searches(self.store, limit)

    def session_searches(self, session_id: str) -> list[dict[str, Any]]:
        """A session's logged searches, in time order."""
        return admin_logs.session_searches(self.store, session_id)

    def host_decisions(self, session_id: str) -> list[dict[str, Any]] | None:
        """A session's host-issued memory decisions, or None when the store keeps none."""
        return admin_logs.host_decisions(self.store, session_id)

    def recent_sessions(self, limit: int = 300) -> list[dict[str, Any]]:
        """The latest sessions, with whether a prompt prefix was recorded."""
        return admin_logs.recent_sessions(self.store, limit)

    def ended_sessions(self, agent_id: str | None = None, user_id: str | None = None, *, page: int = 1,
                       page_size: int = 50) -> RowsPage:
        """Ended sessions, newest first, each with its latest extraction run."""
        return admin_logs.ended_sessions(self.store, agent_id, user_id, page, page_size)

    def count_extraction_runs(self, *, status: str | None = None, session_id: str | None = None) -> int:
        """How many runs ``extraction_runs`` pages through with these filters."""
        return runs.count_runs(self.store, status=status, session_id=session_id)

    # -- the overview -------------------------------------------------------------------------------

    def review_queue_sizes(self) -> dict[str, int]:
        """Provisional and review-due records, failed, queued and retrying extraction runs."""
        return {**overview.review_queue_sizes(self.store), "retrying_extractions": runs.count_waiting_after_failure(self.store)}

    def records_over_time(self) -> list[dict]:
        """Records created per day and type."""
        return overview.records_over_time(self.store)

    def counts_by_scope(self, limit: int = 20) -> list[dict]:
        """Live records per scope, largest first."""
        return overview.counts_by_scope(self.store, limit)

    def search_latencies(self, limit: int = 5000, include_extraction: bool = False) -> list[float]:
        """Total milliseconds of the latest logged searches (the extractor's own only with ``include_extraction``)."""
        return overview.search_latencies(self.store, limit, include_extraction)

    def recent_events(self, limit: int = 15) -> list[dict]:
        """The latest events, newest first."""
        return overview.recent_events(self.store, limit)

    def live_records_per_day(self) -> list[dict[str, Any]]:
        """Records created per day and type, tombstones left out."""
        return admin_logs.live_records_per_day(self.store)

    def search_timings(self, include_extraction: bool = False) -> list[dict[str, Any]]:
        """Every logged search's day, milliseconds and emptiness (the extractor's own related-record
        searches only with ``include_extraction``)."""
        return admin_logs.search_timings(self.store, include_extraction)

    def search_outcomes(self, include_extraction: bool = False) -> list[dict[str, Any]]:
        """Every logged search's emptiness and empty reason (the extractor's own searches only
        with ``include_extraction``)."""
        return admin_logs.search_outcomes(self.store, include_extraction)

    def review_backlog(self) -> list[dict[str, Any]]:
        """Per scope, what waits for a reviewer."""
        return admin_logs.review_backlog(self.store)

    def extraction_outcomes(self) -> dict[str, list[dict[str, Any]]]:
        """Runs by status and the candidates of each latest attempt by outcome."""
        return admin_logs.extraction_outcomes(self.store)

    # -- dates people type, and demo stores -----------------------------------------------------------

    def read_date(self, text: str) -> datetime | None:
        """The start of the moment a typed phrase names ("next week", "1 May"), read the way the
        extractor reads dates, with this service's clock as now; None when it names no date."""
        resolution = resolve(text, self.clock.now())
        return None if resolution is None else resolution.start

    @staticmethod
    def stored_demo_now(path: str | Path) -> str | None:
        """The ``demo_now`` a demo store file carries, read before the store is opened (None otherwise)."""
        return admin_logs.stored_demo_now(path)
