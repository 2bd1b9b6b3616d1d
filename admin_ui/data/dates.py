"""Dates people type into the app: "next week", "in two weeks", "2026-05-01", resolved before saving.

The same parser the extractor uses for temporal claims reads the text (``MemoryService.read_date``,
over ``memory_core.extract.temporal``), with the service clock as "now" (the demo clock in demo
mode). A review date is the *start* of what the text names: "next week" means Monday of next week,
"2026-05-01" that day at 00:00 UTC, because a reviewer wants to look again when that period
begins. It must lie in the future; anything else is refused with a sentence saying why, and
nothing is saved.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from memory_core.clock import format_ts, parse_ts, to_utc
from memory_core.errors import InvalidInputError


@dataclass(frozen=True)
class ResolvedDate:
    """What the person typed and the moment it stands for."""

    text: str
    moment: datetime

    @property
    def iso(self) -> str:
        return format_ts(self.moment)

    def describe(self) -> str:
        return f"{self.moment:%A %d %B %Y, %H:%M} UTC ({self.iso})"


def _exact(text: str) -> datetime | None:
    try:
        moment = parse_ts(text)
    except (ValueError, TypeError):
        return None
    if moment is None:
        return None
    return to_utc(moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc))


def resolve_review_date(service, text: str) -> ResolvedDate:
    """The future moment ``text`` names, now being the service clock's; raises InvalidInputError with
    a friendly reason otherwise."""
    cleaned = (text or "").strip()
    if not cleaned:
        raise InvalidInputError("type a date for the next review, or leave the box empty", field="next_review_at")
    if len(cleaned) > 100:
        raise InvalidInputError("a review date is a short phrase such as 'next week' or '2026-05-01'", field="next_review_at")
    now = service.clock.now()
    moment = _exact(cleaned) or service.read_date(cleaned)
    if moment is None:
        raise InvalidInputError(
            f"'{cleaned}' is not a date I can read; try 'next week', 'in 10 days' or '2026-05-01'",
            field="next_review_at")
    if moment <= to_utc(now):
        raise InvalidInputError(
            f"the next review must be in the future: '{cleaned}' is {format_ts(moment)}, "
            f"and now is {format_ts(now)}", field="next_review_at")
    return ResolvedDate(cleaned, moment)
