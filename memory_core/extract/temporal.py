"""Temporal metadata: a date is attached only when the supporting turn says it.

An expression ("next Tuesday", "in April", "until 20 March") is resolved by ``dateparser``
with the turn's own timestamp as the base, never the time the extraction runs. The parser's
period (day, week, month, year) turns the expression into a half-open range, and each field
takes the end it needs: ``valid_from`` the start, ``valid_until`` and ``review_at`` the end (a plan
for next Tuesday is due for review once Tuesday is over).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from ..clock import format_ts, to_utc
from ..text import quote_fold as fold
from .candidates import TemporalClaim

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NEXT_WEEKDAY = re.compile(r"\bnext\s+(" + "|".join(_WEEKDAYS) + r")\b", re.IGNORECASE)
_SINCE = re.compile(r"^since\b", re.IGNORECASE)
_LEADING_PREPOSITION = re.compile(r"^(?:on|in|by|until|till|til|through|from|starting|since|as of|before|after|during)\s+", re.IGNORECASE)


@dataclass
class Resolution:
    """A parsed expression: its range [start, end) and the parser's granularity."""

    expression: str
    start: datetime
    end: datetime
    period: str

    def label(self) -> str:
        """A short absolute form to put next to a relative expression in content."""
        if self.period == "year":
            return f"{self.start.year}"
        if self.period == "month":
            return self.start.strftime("%B %Y")
        if self.period == "week":
            return f"week of {self.start.date().isoformat()}"
        if self.period == "either":  # an ambiguous "next <weekday>": this week's day or the next week's
            return f"{self.start.date().isoformat()} or {(self.end - timedelta(days=1)).date().isoformat()}"
        return self.start.date().isoformat()

    def value_for(self, field_name: str) -> datetime:
        return self.start if field_name == "valid_from" else self.end


@dataclass
class TemporalCheck:
    """The validator's verdict on one temporal claim."""

    field: str
    expression: str
    accepted: bool
    reason: str
    value: datetime | None = None
    resolution: Resolution | None = None

    def to_dict(self) -> dict:
        return {"field": self.field, "expression": self.expression, "accepted": self.accepted, "reason": self.reason,
                "value": format_ts(self.value), "period": self.resolution.period if self.resolution else None}


def _parser(base: datetime, prefer: str):
    from dateparser.date import DateDataParser

    naive_base = to_utc(base).replace(tzinfo=None)
    return DateDataParser(
        languages=["en"],
        settings={
            "RELATIVE_BASE": naive_base,
            "PREFER_DATES_FROM": prefer,
            "RETURN_AS_TIMEZONE_AWARE": False,
            "RETURN_TIME_AS_PERIOD": True,
        },
    )


def resolve(expression: str, base: datetime) -> Resolution | None:
    """Resolve ``expression`` against ``base`` (the turn's timestamp); None if it is not a date.

    Incomplete dates ("Tuesday", "in April") are read as the next one, except after "since",
    which looks back ("since January" said in March means the January just gone).
    """
    stripped = expression.strip()
    prefer = "past" if _SINCE.match(stripped) else "future"
    text = _LEADING_PREPOSITION.sub("", stripped)
    if not text:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = _parser(base, prefer).get_date_data(text)
    if data is None or data.date_obj is None:
        return None
    moment = data.date_obj.replace(tzinfo=timezone.utc)
    period = data.period or "day"
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "year":
        start = day.replace(month=1, day=1)
        end = start.replace(year=start.year + 1)
    elif period == "month":
        start = day.replace(day=1)
        end = (start + timedelta(days=32)).replace(day=1)
    elif period == "week":
        start = day - timedelta(days=day.weekday())
        end = start + timedelta(days=7)
    elif period in ("time", "part_of_day", "hour", "minute", "second"):
        start, end, period = moment, day + timedelta(days=1), "time"
    else:
        start, end, period = day, day + timedelta(days=1), "day"
    return Resolution(expression=expression, start=start, end=end, period=period)


def ambiguity(field_name: str, expression: str, base: datetime, resolution: Resolution) -> str | None:
    """Why an expression is too ambiguous to date, or None.

    "next Friday" said on a Thursday means tomorrow to some people and the Friday after to
    others; when the parser's answer falls in the same calendar week as the turn, no date is
    attached rather than a guess.
    """
    if two_readings(expression, base, resolution) is not None:
        return f"'{expression}' said on a {to_utc(base).date().strftime('%A')} could mean this week or the next"
    if field_name != "valid_from" and resolution.end <= to_utc(base):
        return f"'{expression}' resolves to a range that is already over at the turn's time"
    return None


def two_readings(expression: str, base: datetime, resolution: Resolution) -> tuple[Resolution, Resolution] | None:
    """The two days an ambiguous "next <weekday>" can mean (this week's and the next week's), or None."""
    if not _NEXT_WEEKDAY.search(expression):
        return None
    if resolution.start.date().isocalendar()[:2] != to_utc(base).date().isocalendar()[:2]:
        return None
    week = timedelta(days=7)
    return resolution, Resolution(expression, resolution.start + week, resolution.end + week, resolution.period)


def _review_after_both(field_name: str, expression: str, turn_at: datetime, resolution: Resolution) -> TemporalCheck | None:
    """A review time for an ambiguous "next <weekday>": once the later reading is over, so a plan is
    never kept without one (a review a week late costs little; none at all keeps a stale plan)."""
    readings = two_readings(expression, turn_at, resolution)
    if field_name != "review_at" or readings is None:
        return None
    early, late = readings
    both = f"{early.label()} or {late.label()}"
    reason = (f"'{expression}' in the turn of {format_ts(turn_at)} (a {to_utc(turn_at).strftime('%A')}) could mean "
              f"{both}; review once the later is over")
    return TemporalCheck(field_name, expression, True, reason, value=late.end,
                         resolution=Resolution(expression, early.start, late.end, "either"))


def check_claim(field_name: str, claim: TemporalClaim, turn_text: str, turn_at: datetime) -> TemporalCheck:
    """Validate one claim against its supporting turn: the expression must be in it and parse."""
    expression = claim.expression.strip()
    if not expression or fold(expression) not in fold(turn_text):
        return TemporalCheck(field_name, expression, False, "the supporting turn does not contain this temporal expression")
    resolution = resolve(expression, turn_at)
    if resolution is None:
        return TemporalCheck(field_name, expression, False, "the expression could not be resolved to a date")
    either = _review_after_both(field_name, expression, turn_at, resolution)
    if either is not None:
        return either
    why = ambiguity(field_name, expression, turn_at, resolution)
    if why:
        return TemporalCheck(field_name, expression, False, why, resolution=resolution)
    value = resolution.value_for(field_name)
    reason = f"'{expression}' in the turn of {format_ts(turn_at)} resolves to {resolution.label()} ({resolution.period})"
    if claim.value:
        reason += f"; the proposed value {claim.value!r} was replaced by the parsed one"
    return TemporalCheck(field_name, expression, True, reason, value=value, resolution=resolution)


def annotate(content: str, checks: list[TemporalCheck]) -> str:
    """Put the absolute date after each accepted relative expression found in ``content``."""
    out = content
    for check in checks:
        if not check.accepted or check.resolution is None:
            continue
        label = check.resolution.label()
        if label in out:
            continue
        match = re.search(re.escape(check.expression), out, re.IGNORECASE)
        if match:
            out = f"{out[: match.end()]} ({label}){out[match.end():]}"
    return out
