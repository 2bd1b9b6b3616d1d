"""Log retention: the prune pass that keeps the search and write logs within age and size limits.

The search log grows by one row per search (tens of KB with its trace), so without pruning it
outgrows everything else in the file. ``prune_logs`` deletes rows older than the configured age
and then the oldest rows until the search log's stored size is under the limit, a batch per
transaction so writers wait at most one short batch. The event log is the audit trail and is
never pruned. Deleted rows' pages are zeroed (``secure_delete``) and reused; the file itself
only shrinks with ``VACUUM`` (or a backup, which copies live pages only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..clock import format_ts, parse_ts

SEARCH_ROW_BYTES = ("COALESCE(length(raw_query),0) + COALESCE(length(rewritten_query),0) + COALESCE(length(request),0) + "
                    "COALESCE(length(scopes),0) + COALESCE(length(trace),0) + COALESCE(length(result_ids),0) + "
                    "COALESCE(length(stages),0)")


@dataclass
class PruneReport:
    """Rows deleted by one prune pass, by log and reason."""

    at: str
    deleted: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "deleted": dict(self.deleted)}

    @property
    def total(self) -> int:
        return sum(self.deleted.values())


def _delete_older(store, table: str, cutoff: str, batch: int, key: str = "seq") -> int:
    deleted = 0
    while True:
        with store.transaction() as conn:
            cur = conn.execute(
                f"DELETE FROM {table} WHERE {key} IN (SELECT {key} FROM {table} WHERE at < ? ORDER BY {key} LIMIT ?)", (cutoff, batch)
            )
            deleted += cur.rowcount
        if cur.rowcount < batch:
            return deleted


def _trim_search_log(store, max_bytes: int, batch: int) -> int:
    deleted = 0
    with store.lock:
        total = store.conn.execute(f"SELECT COALESCE(SUM({SEARCH_ROW_BYTES}), 0) FROM search_log").fetchone()[0]
    while total > max_bytes:
        with store.transaction() as conn:
            rows = conn.execute(f"SELECT seq, {SEARCH_ROW_BYTES} AS size FROM search_log ORDER BY seq LIMIT ?", (batch,)).fetchall()
            if not rows:
                break
            last, freed = None, 0
            for row in rows:  # the oldest rows, just enough of them to get under the limit
                last, freed = row["seq"], freed + row["size"]
                if total - freed <= max_bytes:
                    break
            cur = conn.execute("DELETE FROM search_log WHERE seq <= ?", (last,))
            deleted += cur.rowcount
            total -= freed
    return deleted


def prune_logs(store, settings, now: datetime, *, actor: str = "maintenance") -> PruneReport:
    """Apply the ``housekeeping`` retention settings to the search and write logs; returns what went."""
    report = PruneReport(at=format_ts(now))
    batch = settings.prune_batch_rows
    if settings.search_log_max_age_days is not None:
        cutoff = format_ts(now - timedelta(days=settings.search_log_max_age_days))
        report.deleted["search_log (age)"] = _delete_older(store, "search_log", cutoff, batch)
        # host-issued memory decisions name their gap searches: they go with the search log's age limit
        report.deleted["host_memory_decisions (age)"] = _delete_older(store, "host_memory_decisions", cutoff, batch, "rowid")
    if settings.search_log_max_mb is not None:
        report.deleted["search_log (size)"] = _trim_search_log(store, int(settings.search_log_max_mb * 1_000_000), batch)
    if settings.write_log_max_age_days is not None:
        cutoff = format_ts(now - timedelta(days=settings.write_log_max_age_days))
        report.deleted["write_log (age)"] = _delete_older(store, "write_log", cutoff, batch)
    if report.total:
        with store.transaction() as conn:
            store.append_event(conn, at=report.at, kind="logs.pruned", actor=actor,
                               reason="log retention settings", payload=report.deleted)
    store.set_meta("logs_pruned_at", report.at)
    return report


def prune_if_due(store, settings, now: datetime, *, actor: str = "maintenance") -> PruneReport | None:
    """Run :func:`prune_logs` when ``housekeeping.prune_interval_s`` has passed since the last pass.

    Also finishes any forget whose WAL truncation a reader blocked (in any process): the
    flag is in the store, so the worker completes the erasure even if the forgetting process
    has gone.
    """
    if store.erase_pending or store.get_meta("erase_pending") == "1":
        store.try_truncate_wal()
    last = store.get_meta("logs_pruned_at")
    if last is not None:
        try:
            due = (now - parse_ts(last)).total_seconds() >= settings.prune_interval_s
        except ValueError:
            due = True
        if not due:
            return None
    return prune_logs(store, settings, now, actor=actor)
