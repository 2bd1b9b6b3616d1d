"""Time for the whole library: an injectable clock and one timestamp format.

Timestamps are stored as ISO-8601 UTC strings with microseconds and a ``Z`` suffix so that
string order equals time order inside SQLite.
"""

from __future__ import annotations

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
    """Format a datetime for storage (None passes through)."""
    if value is None:
        return None
    return to_utc(value).strftime(_FORMAT)


def parse_ts(value: str | datetime | None) -> datetime | None:
    """Parse a stored or user-supplied ISO timestamp; dates alone mean midnight UTC."""
    if value is None or isinstance(value, datetime):
        return to_utc(value) if isinstance(value, datetime) else None
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    return to_utc(parsed)


def epoch(value: str | datetime | None) -> float | None:
    """Seconds since the epoch for a stored timestamp (None passes through)."""
    parsed = parse_ts(value)
    return parsed.timestamp() if parsed is not None else None
