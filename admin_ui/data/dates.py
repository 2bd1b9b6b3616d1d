"""Dates people type into the app: "next week", "in two weeks", "2026-05-01", resolved before saving.

The same parser the extractor uses for temporal claims reads the text (``MemoryService.read_date``,
over ``memory_core.extract.temporal``), with the service clock as "now" (the demo clock in demo
mode). A review date is the *start* of what the text names: "next week" means Monday of next week,
"2026-05-01" that day at 00:00 UTC, because a reviewer wants to look again when that period
begins. It must lie in the future; anything else is refused with a sentence saying why, and
nothing is saved.

One rule for dates written in figures, said beside the box (:data:`DATE_RULE`): ISO
``YYYY-MM-DD``. ``05/06/2026`` could be 5 June or 6 May depending on who typed it, so any other
all-figure date (slashes, dots, or dashes in another order) is refused with the ISO form to type
instead, never guessed; an impossible date such as ``2026-02-30`` is refused too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

from memory_core.clock import format_ts, parse_ts, to_utc
from memory_core.errors import InvalidInputError


DATE_RULE = ("Dates in figures as YYYY-MM-DD (2026-05-01), or words such as 'next week' or 'in 10 days'; "
             "times are UTC.")

_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December")

# Three groups of figures split by / . - (or spaces) that are not ISO's YYYY-MM-DD.
_FIGURES = re.compile(r"^\s*(\d{1,4})\s*[/.\-\s]\s*(\d{1,2})\s*[/.\-\s]\s*(\d{1,4})\s*$")
_ISO_DAY = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})(?:$|[T ])")


def _figures_problem(text: str) -> str | None:
    """Why an all-figure date cannot be used (not ISO, or not a real day), or None."""
    iso = _ISO_DAY.match(text)
    if iso:
        year, month, day = (int(g) for g in iso.groups())
        try:
            datetime(year, month, day)
        except ValueError:
            return f"'{text}' is not a real date (year {year}, month {month}, day {day}); nothing was changed"
        return None
    figures = _FIGURES.match(text)
    if not figures:
        return None
    a, b, c = figures.groups()
    if len(c) == 4 and int(a) <= 31 and int(b) <= 31:
        options = []
        for day, month in ((int(a), int(b)), (int(b), int(a))):
            try:
                datetime(int(c), month, day)
                options.append(f"{int(c):04d}-{month:02d}-{day:02d}")
            except ValueError:
                pass
        options = list(dict.fromkeys(options))
        if len(options) == 2:
            return (f"'{text}' could be {_spell(options[0])} or {_spell(options[1])}: type the date as YYYY-MM-DD "
                    f"({options[0]} or {options[1]}). Nothing was changed")
        if options:
            return f"'{text}' is not in the YYYY-MM-DD form: type {options[0]}. Nothing was changed"
    return f"'{text}' is not a date in the YYYY-MM-DD form (for example 2026-05-01); nothing was changed"


def _spell(iso_day: str) -> str:
    year, month, day = (int(part) for part in iso_day.split("-"))
    return f"{day} {_MONTH_NAMES[month - 1]} {year}"


def _minute(moment: datetime) -> str:
    """``YYYY-MM-DD HH:MM UTC``: the form the box asks for, to the minute (four-digit years always)."""
    m = to_utc(moment)
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d} {m.hour:02d}:{m.minute:02d} UTC"


@dataclass(frozen=True)
class ResolvedDate:
    """What the person typed and the moment it stands for."""

    text: str
    moment: datetime

    @property
    def iso(self) -> str:
        return format_ts(self.moment)


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
    problem = _figures_problem(cleaned)
    if problem:
        raise InvalidInputError(problem, field="next_review_at")
    now = service.clock.now()
    moment = _exact(cleaned) or service.read_date(cleaned)
    if moment is None:
        raise InvalidInputError(
            f"'{cleaned}' is not a date I can read; try 'next week', 'in 10 days' or '2026-05-01'",
            field="next_review_at")
    if moment <= to_utc(now):
        raise InvalidInputError(
            f"the next review must be in the future: '{cleaned}' is {_minute(moment)}, "
            f"and now is {_minute(now)}", field="next_review_at")
    return ResolvedDate(cleaned, moment)
