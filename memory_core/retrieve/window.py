"""The event-time window's own stage: what the From/To window removed, and what the filters left.

The hard filter (:mod:`.filters`) applies the window with everything else; this stage counts what
the window alone cost (the readable records the same filter without it admits, less those it
admits), so an empty answer can name the window instead of blaming the gate for records it never
saw. A record without an event time is outside every window.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..policy.grants import ScopeAccess
from ..store.search_queries import lapsed_provisional_seqs
from .filters import HardFilter, IndexMask, allowed_count, as_of_filter, index_mask, no_records_reason
from .recorder import StageRecorder
from .request import SearchRequest
from .services import SearchServices


@dataclass(frozen=True)
class FilterOutcome:
    """What the hard filter and its event-time window left: the readable records every generator
    may look at, how many the window removed, and (when none is left) why, in words the searching
    agent may read."""

    readable_records: int
    window_removed: int
    window: str | None  # the window in words, when the request set one
    reason: str | None  # why nothing is left (None while something is)

    def to_dict(self) -> dict[str, Any]:
        return {"readable_records": self.readable_records, "window_removed": self.window_removed,
                "window": self.window, "no_records_reason": self.reason}

    def window_note(self) -> str | None:
        """The clause an empty answer leads with when the window removed records (None when it removed none)."""
        if not self.window_removed:
            return None
        return (f"the event-time window ({self.window}) removed {self.window_removed} readable record(s) before ranking "
                "(search without From/To to include them)")


def window_text(flt: HardFilter) -> str | None:
    """The filter's event-time window in words ("from 2026-01-01T00:00:00Z to any"), None without one."""
    if flt.event_from is None and flt.event_to is None:
        return None
    return f"from {flt.event_from or 'any'} to {flt.event_to or 'any'}"


def window_removed(deps: SearchServices, flt: HardFilter, mask: IndexMask, historical: bool) -> int:
    """How many readable records (scope, status, type and lapse as in ``flt``) the event-time window keeps out."""
    wider = replace(flt, event_from=None, event_to=None)
    sql_filter = hasattr(deps.index, "filter_mask")  # PostgreSQL: lapsed records are excluded by the filter's SQL
    lapsed = [] if historical or sql_filter else lapsed_provisional_seqs(deps.store, flt.now)
    wide = index_mask(deps.index, wider.without_as_of(), lapsed)
    if flt.as_of:  # the as-of rule stays: only the window's own cost is counted
        wide = as_of_filter(deps.store, deps.index, wider, wide)[1]
    return max(allowed_count(wide) - allowed_count(mask), 0)


class TimeWindowStage:
    """The event-time window's account: how many readable records the From/To window removed (the
    hard filter applies it; this stage counts what it cost), and why nothing is left when nothing is."""

    name = "time_window"

    @dataclass(slots=True)
    class Inputs:
        request: SearchRequest
        access: ScopeAccess
        filter: HardFilter
        mask: IndexMask

    @dataclass(slots=True)
    class Outputs:
        filter_outcome: FilterOutcome

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        flt = given.filter
        left = allowed_count(given.mask)
        window = window_text(flt)
        if window is None:
            rec.skip("no event-time window was asked for (time_from / time_to, the explorer's Event time from / to)")
            return self.Outputs(FilterOutcome(left, 0, None, no_records_reason(given.access, flt, 0) if not left else None))
        removed = window_removed(deps, flt, given.mask, given.request.historical)
        outcome = FilterOutcome(left, removed, window, no_records_reason(given.access, flt, removed) if not left else None)
        rec.io(inputs={"event_from": flt.event_from, "event_to": flt.event_to},
               outputs={"readable_without_window": left + removed, "removed": removed, "readable_records": left})
        rec.note(f"the event-time window ({window}) removed {removed} of {left + removed} readable record(s); "
                 "a record without an event time is outside every window")
        if outcome.reason:
            rec.note(outcome.reason)
        return self.Outputs(outcome)
