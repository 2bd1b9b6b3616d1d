"""The stages before candidate generation: query rewrite, readable scopes, and the hard filter.

The hard filter is computed once and used two ways: as a SQL predicate for the lexical and entity
generators, and as a boolean mask over the vector index's rows for the dense generator. A record
outside the readable scopes, in a non-retrievable lifecycle state, of an unrequested type, or
outside the event-time window can therefore never become a candidate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..clock import epoch
from ..store.records import HISTORICAL_STATUSES, LIVE_STATUSES, RECORD_TYPES
from .pipeline import SearchContext


@dataclass(frozen=True)
class HardFilter:
    """Scope, lifecycle, type and event-time restrictions of one search.

    ``now`` is used for lazily lapsed records: a provisional record whose ``expires_at`` has
    passed is treated as expired even before a maintenance pass marks it so.
    """

    scopes: tuple[str, ...]
    statuses: tuple[str, ...]
    types: tuple[str, ...] | None
    event_from: str | None
    event_to: str | None
    now: str
    include_lapsed: bool

    def sql(self, alias: str = "r") -> tuple[str, list[Any]]:
        """A WHERE fragment over ``records AS alias`` and its parameters."""
        if not self.scopes or not self.statuses:
            return "1 = 0", []
        pairs = [scope.split(":", 1) for scope in self.scopes]
        clauses = [f"({alias}.scope_kind, {alias}.scope_id) IN (VALUES {', '.join('(?, ?)' for _ in pairs)})"]
        params: list[Any] = [part for pair in pairs for part in pair]
        clauses.append(f"{alias}.status IN ({', '.join('?' * len(self.statuses))})")
        params.extend(self.statuses)
        if self.types:
            clauses.append(f"{alias}.type IN ({', '.join('?' * len(self.types))})")
            params.extend(self.types)
        if self.event_from is not None:
            clauses.append(f"{alias}.event_at >= ?")
            params.append(self.event_from)
        if self.event_to is not None:
            clauses.append(f"{alias}.event_at <= ?")
            params.append(self.event_to)
        if not self.include_lapsed:
            clauses.append(f"NOT ({alias}.status = 'provisional' AND {alias}.expires_at IS NOT NULL AND {alias}.expires_at <= ?)")
            params.append(self.now)
        return " AND ".join(clauses), params

    def admits(self, row: Any) -> str | None:
        """None if a fetched record row passes the filter, else why not (a defence against a stale index)."""
        scope = f"{row['scope_kind']}:{row['scope_id']}"
        if scope not in self.scopes:
            return f"scope {scope} is not readable"
        if row["status"] not in self.statuses:
            return f"status {row['status']} is excluded"
        if self.types and row["type"] not in self.types:
            return f"type {row['type']} was not requested"
        if self.event_from is not None and (row["event_at"] is None or row["event_at"] < self.event_from):
            return "event time outside the window"
        if self.event_to is not None and (row["event_at"] is None or row["event_at"] > self.event_to):
            return "event time outside the window"
        if not self.include_lapsed and row["status"] == "provisional" and row["expires_at"] and row["expires_at"] <= self.now:
            return "provisional record past its expiry"
        return None

    def with_statuses(self, statuses: tuple[str, ...], include_lapsed: bool) -> "HardFilter":
        return HardFilter(self.scopes, statuses, self.types, self.event_from, self.event_to, self.now, include_lapsed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scopes": list(self.scopes),
            "statuses": list(self.statuses),
            "types": list(self.types) if self.types else None,
            "event_from": self.event_from,
            "event_to": self.event_to,
            "lapsed_provisional": "included" if self.include_lapsed else "excluded",
        }

    def describe(self) -> str:
        parts = [f"scopes {', '.join(self.scopes) or '(none)'}", f"status {'/'.join(self.statuses)}"]
        if self.types:
            parts.append(f"type {'/'.join(self.types)}")
        if self.event_from or self.event_to:
            parts.append(f"event time {self.event_from or '-inf'} .. {self.event_to or '+inf'}")
        return "; ".join(parts)


def index_mask(index, flt: HardFilter, lapsed_seqs: list[int]) -> np.ndarray:
    """The filter as a boolean mask over the vector index's rows."""
    if hasattr(index, "filter_mask"):  # PostgreSQL: the filter runs as SQL (lapsed records included)
        return index.filter_mask(flt)
    mask = index.mask(list(flt.scopes), flt.statuses, list(flt.types) if flt.types else None,
                      epoch(flt.event_from), epoch(flt.event_to))
    for seq in lapsed_seqs:
        row = index.backend.row_of(seq)
        if row is not None and row < mask.shape[0]:
            mask[row] = False
    return mask


def lapsed_seqs(conn, now: str) -> list[int]:
    """Provisional records whose expiry has passed (the partial expiry index makes this cheap)."""
    rows = conn.execute(
        "SELECT seq FROM records WHERE status = 'provisional' AND expires_at IS NOT NULL AND expires_at <= ?", (now,)
    ).fetchall()
    return [row[0] for row in rows]


# -- stages ---------------------------------------------------------------------------------------


class RewriteStage:
    """Optional: a standalone query from the raw query and host-supplied current-turn context."""

    name = "rewrite"

    def run(self, ctx: SearchContext) -> SearchContext:
        req = ctx.request
        ctx.query = req.query
        enabled = ctx.settings.rewrite_enabled if req.rewrite is None else req.rewrite
        ctx.io(inputs={"raw_query": req.query, "context_chars": len(req.context or ""), "enabled": enabled})
        if not enabled:
            ctx.rewrite_status = "disabled"
            ctx.skip("rewriting is disabled")
            return ctx
        if not (req.context or "").strip():
            ctx.rewrite_status = "skipped: no current-turn context"
            ctx.skip(ctx.rewrite_status)
            return ctx
        outcome = ctx.deps.rewriter(ctx.settings).rewrite(req.query, req.context)
        ctx.query = outcome.query
        ctx.rewritten_query = outcome.rewritten
        ctx.rewrite_status = outcome.status
        ctx.io(outputs={"query": ctx.query, "rewritten_query": outcome.rewritten, "status": outcome.status})
        return ctx


class ScopeStage:
    """Readable scopes of (agent, user) from the grant table, each with the reason it is readable."""

    name = "scope_resolution"

    def run(self, ctx: SearchContext) -> SearchContext:
        req = ctx.request
        ctx.access = ctx.deps.access(req.agent_id, req.user_id)
        ctx.scopes = ctx.access.readable_keys
        ctx.io(inputs={"agent_id": req.agent_id, "user_id": req.user_id},
               outputs={"readable": dict(ctx.access.readable), "ignored": dict(ctx.access.ignored)})
        if not ctx.scopes:
            ctx.halt("no readable scopes")
        return ctx


class HardFilterStage:
    """Scope + lifecycle + type + event-time window, as a SQL predicate and an index mask."""

    name = "hard_filter"

    def run(self, ctx: SearchContext) -> SearchContext:
        req = ctx.request
        statuses = HISTORICAL_STATUSES if req.historical else LIVE_STATUSES
        ctx.filter = HardFilter(
            scopes=tuple(ctx.scopes), statuses=tuple(statuses),
            types=tuple(t for t in RECORD_TYPES if t in req.types) if req.types else None,
            event_from=req.time_from, event_to=req.time_to, now=ctx.at, include_lapsed=req.historical,
        )
        index = ctx.deps.index
        applied = index.refresh()
        store = ctx.deps.store
        sql_filter = hasattr(index, "filter_mask")  # PostgreSQL: lapsed records are excluded by the filter's SQL
        with store.lock:
            lapsed = [] if req.historical or sql_filter else lapsed_seqs(store.conn, ctx.at)
        ctx.mask = index_mask(index, ctx.filter, lapsed)
        allowed = int(ctx.mask.sum())
        ctx.io(inputs={"historical": req.historical, "index_changes_applied": applied},
               outputs={**ctx.filter.to_dict(), "indexed_rows_allowed": allowed,
                        "lapsed_provisional_excluded": (ctx.mask.lapsed or 0) if sql_filter else len(lapsed)})
        ctx.note(ctx.filter.describe())
        return ctx
