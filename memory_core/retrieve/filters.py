"""Readable scopes and the hard filter: what a search may see, before anything is ranked.

The hard filter is computed once and used two ways: as a SQL predicate for the lexical and entity
generators (rendered by ``store.search_queries.filter_predicate``), and as a boolean mask over the
vector index's rows for the dense generator. A record outside the readable scopes, in a
non-retrievable lifecycle state, of an unrequested type, outside the event-time window or (an
as-of search) outside the set the memory held or held valid at that instant
(``store.as_of_queries``) can therefore never become a candidate.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..clock import epoch
from ..index.pg_vector import SqlFilter
from ..policy.grants import ScopeAccess
from ..store.as_of_queries import AS_OF_STATUSES, admitted_seqs
from ..store.records import HISTORICAL_STATUSES, LIVE_STATUSES, RECORD_TYPES
from ..store.search_queries import filter_predicate, lapsed_provisional_seqs
from .recorder import StageRecorder
from .request import SearchRequest
from .services import SearchServices

IndexMask = np.ndarray | SqlFilter  # the filter over the vector index's rows (PostgreSQL: its SQL and count)


def allowed_count(mask) -> int:
    """How many rows ``mask`` admits: a boolean array's true entries (``np.count_nonzero``, which is
    an order of magnitude cheaper than ``.sum()`` on a 50K-row mask), or a PostgreSQL filter's count."""
    if isinstance(mask, np.ndarray):
        return int(np.count_nonzero(mask))
    return int(mask.sum())


@dataclass(frozen=True)
class HardFilter:
    """Scope, lifecycle, type and event-time restrictions of one search.

    ``now`` is used for lazily lapsed records: a provisional record whose ``expires_at`` has
    passed is treated as expired even before a maintenance pass marks it so. ``as_of`` and
    ``as_of_mode`` restrict an as-of search to the records held (``memory``) or held valid
    (``world``) at that instant; ``as_of_seqs`` is that set once the hard filter stage has read it.
    """

    scopes: tuple[str, ...]
    statuses: tuple[str, ...]
    types: tuple[str, ...] | None
    event_from: str | None
    event_to: str | None
    now: str
    include_lapsed: bool
    as_of: str | None = None
    as_of_mode: str | None = None
    as_of_seqs: frozenset[int] | None = None

    def sql(self, alias: str = "r") -> tuple[str, list[Any]]:
        """A WHERE fragment over ``records AS alias`` and its parameters (the store renders it)."""
        return filter_predicate(self, alias)

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
        if self.as_of_seqs is not None and row["seq"] not in self.as_of_seqs:
            return f"not {'held' if self.as_of_mode == 'memory' else 'valid'} at {self.as_of}"
        return None

    def with_statuses(self, statuses: tuple[str, ...], include_lapsed: bool) -> "HardFilter":
        return replace(self, statuses=statuses, include_lapsed=include_lapsed)

    def without_as_of(self) -> "HardFilter":
        """This filter with no as-of restriction (what the as-of rule is counted against)."""
        return replace(self, as_of=None, as_of_mode=None, as_of_seqs=None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scopes": list(self.scopes),
            "statuses": list(self.statuses),
            "types": list(self.types) if self.types else None,
            "event_from": self.event_from,
            "event_to": self.event_to,
            "lapsed_provisional": "included" if self.include_lapsed else "excluded",
            **({"as_of": {"at": self.as_of, "mode": self.as_of_mode}} if self.as_of else {}),
        }

    def describe(self) -> str:
        parts = [f"scopes {', '.join(self.scopes) or '(none)'}", f"status {'/'.join(self.statuses)}"]
        if self.types:
            parts.append(f"type {'/'.join(self.types)}")
        if self.event_from or self.event_to:
            parts.append(f"event time {self.event_from or '-inf'} .. {self.event_to or '+inf'}")
        if self.as_of:
            parts.append(describe_as_of(self.as_of, self.as_of_mode))
        return "; ".join(parts)


def describe_as_of(at: str, mode: str | None) -> str:
    """The as-of part of a search in words (the trace, the explanation and the empty reason use it)."""
    return f"as of {at}: what the memory held then" if mode == "memory" else f"as of {at}: what was valid in the world then"


def index_mask(index, flt: HardFilter, lapsed_seqs: list[int]) -> IndexMask:
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


def request_filter(request: SearchRequest, access: ScopeAccess, at: str) -> HardFilter:
    """The hard filter of a request for a principal with ``access``, at ``at``.

    An as-of search reaches the statuses its mode allows, and the as-of rule decides among them;
    in memory mode a provisional record's lapse is judged at the as-of instant, not now.
    """
    statuses = HISTORICAL_STATUSES if request.historical else LIVE_STATUSES
    include_lapsed = request.historical
    mode = request.as_of_mode if request.as_of else None
    if mode is not None:
        statuses, include_lapsed = AS_OF_STATUSES[mode], mode == "memory"
    return HardFilter(
        scopes=tuple(access.readable_keys), statuses=tuple(statuses),
        types=tuple(t for t in RECORD_TYPES if t in request.types) if request.types else None,
        event_from=request.time_from, event_to=request.time_to, now=at, include_lapsed=include_lapsed,
        as_of=request.as_of if mode else None, as_of_mode=mode,
    )


def as_of_filter(store, index, flt: HardFilter, base: IndexMask) -> tuple[HardFilter, IndexMask, int]:
    """An as-of filter with its set read (``as_of_seqs``), its index mask and how many rows of
    ``base`` (the same filter without the as-of rule) the rule took out."""
    seqs = frozenset(admitted_seqs(store, *flt.sql()))
    flt = replace(flt, as_of_seqs=seqs)
    if hasattr(index, "filter_mask"):  # PostgreSQL: the rule is part of the filter's SQL
        mask = index.filter_mask(flt)
        return flt, mask, max(allowed_count(base) - allowed_count(mask), 0)
    rows = np.asarray(index.backend.seqs())
    held = np.zeros(base.shape[0], dtype=bool)
    n = min(len(rows), base.shape[0])
    if seqs and n:
        held[:n] = np.isin(rows[:n], np.fromiter(seqs, dtype=np.int64, count=len(seqs)))
    mask = base & held
    return flt, mask, allowed_count(base) - allowed_count(mask)


# -- stages ---------------------------------------------------------------------------------------


class ScopeStage:
    """Readable scopes of (agent, user) from the grant table, each with the reason it is readable."""

    name = "scope_resolution"

    @dataclass(slots=True)
    class Inputs:
        request: SearchRequest

    @dataclass(slots=True)
    class Outputs:
        access: ScopeAccess
        empty_reason: str | None = None

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        req = given.request
        access = deps.access(req.agent_id, req.user_id)
        rec.io(inputs={"agent_id": req.agent_id, "user_id": req.user_id},
               outputs={"readable": dict(access.readable), "ignored": dict(access.ignored)})
        return self.Outputs(access, None if access.readable_keys else "no readable scopes")


class HardFilterStage:
    """Scope + lifecycle + type + event-time window, as a SQL predicate and an index mask."""

    name = "hard_filter"

    @dataclass(slots=True)
    class Inputs:
        request: SearchRequest
        access: ScopeAccess
        at: str

    @dataclass(slots=True)
    class Outputs:
        filter: HardFilter
        mask: IndexMask

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        req = given.request
        flt = request_filter(req, given.access, given.at)
        index = deps.index
        applied = index.refresh()
        sql_filter = hasattr(index, "filter_mask")  # PostgreSQL: lapsed records are excluded by the filter's SQL
        lapsed = [] if req.historical or sql_filter else lapsed_provisional_seqs(deps.store, given.at)
        mask = index_mask(index, flt.without_as_of(), lapsed)
        as_of = {}
        if flt.as_of:
            lapsed_count = (mask.lapsed or 0) if sql_filter else len(lapsed)
            flt, mask, excluded = as_of_filter(deps.store, index, flt, mask)
            as_of = {"as_of_excluded": excluded, "as_of_records": len(flt.as_of_seqs or ())}
        rec.io(inputs={"historical": req.historical, "index_changes_applied": applied},
               outputs={**flt.to_dict(), "indexed_rows_allowed": allowed_count(mask),
                        "lapsed_provisional_excluded": (lapsed_count if flt.as_of else (mask.lapsed or 0) if sql_filter else len(lapsed)),
                        **as_of})
        rec.note(flt.describe())
        left = allowed_count(mask)  # the records every generator may look at
        rec.io(outputs={"readable_records": left})
        if not left:  # the stage that left nothing says why, first (the explorer's stage table shows the first note)
            rec.note(no_records_reason(given.access, flt, None), first=True)
        return self.Outputs(flt, mask)


def no_records_reason(access: ScopeAccess, flt: HardFilter, window_removed: int | None) -> str:
    """Why the hard filter left no readable record ("0 readable records: agent scheduler has no read
    grant on user:alice; agent:scheduler/alice holds no provisional/confirmed record").

    It names only the searching agent's own grants, the restrictions the request asked for and
    counts of records it may read: nothing here depends on what the scopes it cannot read hold,
    since this sentence reaches the model (the tool result's empty_reason) as well as the admin
    trace. ``window_removed`` is what the event-time window removed (None: not counted yet).
    """
    causes = []
    user_scope = f"user:{access.user_id}"
    if user_scope not in access.readable:
        causes.append(access.can_read(user_scope).reason)
    windowed = flt.event_from is not None or flt.event_to is not None
    window = f"from {flt.event_from or 'any'} to {flt.event_to or 'any'}"
    if window_removed:
        causes.append(f"the event-time window ({window}) removed all {window_removed} readable record(s)")
    elif flt.as_of:
        held = "live" if flt.as_of_mode == "memory" else "valid"
        within = f" in the event-time window ({window})" if windowed and window_removed is None else ""
        causes.append(f"nothing was {held} at {flt.as_of} in {', '.join(flt.scopes) or 'the readable scopes'}{within}")
    else:
        held = f"{'/'.join(flt.statuses)} record" + (f" of type {'/'.join(flt.types)}" if flt.types else "")
        within = f" in the event-time window ({window})" if windowed and window_removed is None else ""
        verb = "holds" if len(flt.scopes) == 1 else "hold"
        causes.append(f"{', '.join(flt.scopes)} {verb} no {held}{within}")
    return "0 readable records: " + "; ".join(causes)
