"""Time for the whole library: an injectable clock and one timestamp format.

Timestamps are stored as ISO-8601 UTC strings with microseconds and a ``Z`` suffix so that
string order equals time order inside SQLite.
"""

from __future__ import annotations

import re
import threading
from datetime import datetime, timedelta, timezone
from typing import Protocol

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    """The wall clock, always timezone-aware UTC."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class FixedClock:
    """A clock that stays where it is put; tests and the demo builder move it explicitly."""

    def __init__(self, at: datetime | str) -> None:
        self._lock = threading.Lock()
        self._now = parse_ts(at) if isinstance(at, str) else to_utc(at)

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def set(self, at: datetime | str) -> None:
        with self._lock:
            self._now = parse_ts(at) if isinstance(at, str) else to_utc(at)

    def advance(self, **delta: float) -> datetime:
        with self._lock:
            self._now = self._now + timedelta(**delta)
            return self._now


def to_utc(value: datetime) -> datetime:
    """Naive datetimes are taken to be UTC; aware ones are converted."""
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def format_ts(value: datetime | None) -> str | None:
    """Format a datetime for storage (None passes through).

    The year is always four digits: ``strftime("%Y")`` writes ``999`` for the year 999 on
    Linux, which sorts wrongly and cannot be parsed back.
    """
    if value is None:
        return None
    v = to_utc(value)
    return (f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}"
            f".{v.microsecond:06d}Z")


# Longer than any ISO-8601 timestamp with an offset and nanoseconds; refuses pathological input early.
MAX_TS_CHARS = 64
# Stores written before format_ts padded the year hold e.g. "999-12-31T..."; read them back.
_SHORT_YEAR = re.compile(r"(\d{1,3})(-\d\d-\d\d(?:T.*)?)", re.DOTALL)


def parse_ts(value: str | datetime | None) -> datetime | None:
    """Parse a stored or user-supplied ISO timestamp; dates alone mean midnight UTC.

    Raises ValueError for anything that is not an ISO-8601 date or time within the years
    1-9999 once converted to UTC (an offset that pushes the time past either end included),
    and TypeError for a value that is not a string or datetime.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        try:
            return to_utc(value)
        except OverflowError as exc:
            raise ValueError(f"{value!r} is outside the years 1-9999 in UTC") from exc
    if not isinstance(value, str):
        raise TypeError(f"a timestamp must be an ISO-8601 string, not {type(value).__name__}")
    text = value.strip()
    if not text or len(text) > MAX_TS_CHARS or not text.isascii():
        raise ValueError(f"not an ISO-8601 date or time: {value[:80]!r}")
    short = _SHORT_YEAR.fullmatch(text)
    if short:
        text = f"{int(short.group(1)):04d}{short.group(2)}"
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
        return to_utc(parsed)
    except OverflowError as exc:
        raise ValueError(f"{value!r} is outside the years 1-9999 in UTC") from exc


def end_of_day(value: datetime) -> datetime:
    """The last microsecond of ``value``'s day (no overflow on 9999-12-31)."""
    return value.replace(hour=23, minute=59, second=59, microsecond=999999)


def epoch(value: str | datetime | None) -> float | None:
    """Seconds since the epoch for a stored timestamp (None passes through)."""
    parsed = parse_ts(value)
    return parsed.timestamp() if parsed is not None else None


# An instant with its offset (memory_search's as_of): a date, a time and a zone, nothing left to
# guess. The tool's JSON schema and the request's own check share it, so they admit the same text.
AS_OF_PATTERN = (r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]{1,6})?)?"
                 r"(?:[Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)$")
