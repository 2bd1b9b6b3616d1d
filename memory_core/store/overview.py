"""Read-only counts and series for an overview of a store (admin app overview, notebooks, stats).

Plain SQL over the store, shared by ``MemoryService.stats``, the service's admin methods (the admin
app's overview) and ``memory_core.notebook.figures`` so each number is computed one way.
"""

from __future__ import annotations

from typing import Any

from .db import Store

_GROUP_COLUMNS = ("type", "status", "scope_kind", "source_kind")


def record_counts(store: Store) -> dict[str, Any]:
    """Records by type, status, scope kind and source kind, plus entity, grant, session and queue counts."""
    def group(column: str) -> dict[str, int]:
        assert column in _GROUP_COLUMNS  # a fixed column name, never user input
        return {r[0]: r[1] for r in store.query(f"SELECT {column}, COUNT(*) FROM records GROUP BY {column} ORDER BY {column}")}

    return {
        "path": str(store.path),
        "records": store.scalar("SELECT COUNT(*) FROM records") or 0,
        "by_type": group("type"),
        "by_status": group("status"),
        "by_scope_kind": group("scope_kind"),
        "by_source_kind": group("source_kind"),
        "entities": store.scalar("SELECT COUNT(*) FROM entities WHERE status != 'merged'") or 0,
        "grants": store.scalar("SELECT COUNT(*) FROM grants") or 0,
        "sessions": store.scalar("SELECT COUNT(*) FROM sessions") or 0,
        "review_due": store.scalar("SELECT COUNT(*) FROM records WHERE review_flagged_at IS NOT NULL AND status != 'deleted'") or 0,
        "provisional": store.scalar("SELECT COUNT(*) FROM records WHERE status = 'provisional'") or 0,
        "records_version": store.records_version(),
    }


def records_over_time(store: Store) -> list[dict]:
    """Records created per day and type."""
    rows = store.query(
        "SELECT substr(created_at, 1, 10) AS day, type, COUNT(*) AS n FROM records GROUP BY day, type ORDER BY day"
    )
    return [dict(r) for r in rows]


def counts_by_scope(store: Store, limit: int = 20) -> list[dict]:
    """Live records per scope, largest first."""
    rows = store.query(
        "SELECT scope_kind || ':' || scope_id AS scope, COUNT(*) AS records FROM records WHERE status != 'deleted' "
        "GROUP BY scope ORDER BY records DESC LIMIT ?", (limit,)
    )
    return [dict(r) for r in rows]


def review_queue_sizes(store: Store) -> dict[str, int]:
    """Provisional and review-due records, failed and pending extraction runs."""
    return {
        "provisional": store.scalar("SELECT COUNT(*) FROM records WHERE status = 'provisional'") or 0,
        "review_due": store.scalar("SELECT COUNT(*) FROM records WHERE review_flagged_at IS NOT NULL AND status != 'deleted'") or 0,
        "failed_extractions": store.scalar("SELECT COUNT(*) FROM extraction_runs WHERE status = 'failed'") or 0,
        "queued_extractions": store.scalar("SELECT COUNT(*) FROM extraction_runs WHERE status IN ('queued','running')") or 0,
    }


def search_latencies(store: Store, limit: int = 5000, include_extraction: bool = False) -> list[float]:
    """Total milliseconds of the latest ``limit`` logged searches (the extractor's own searches
    only with ``include_extraction``)."""
    where = "" if include_extraction else " WHERE (origin IS NULL OR origin <> 'extraction')"
    return [r[0] for r in store.query(f"SELECT total_ms FROM search_log{where} ORDER BY seq DESC LIMIT ?", (limit,))]


def recent_events(store: Store, limit: int = 15) -> list[dict]:
    """The latest events, newest first."""
    rows = store.query("SELECT seq, at, kind, actor, record_id, entity_id, reason FROM events ORDER BY seq DESC LIMIT ?", (limit,))
    return [dict(r) for r in rows]
