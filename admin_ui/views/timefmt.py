"""The one way the app shows a moment: ``20 Apr 2026, 09:15:00 UTC``.

The store keeps ISO 8601 timestamps in UTC. Every page shows them through :func:`show_time`
(text) or :data:`GRID_FORMAT` (the dataframe's datetime columns, :func:`admin_ui.views.widgets.table`),
so a time reads the same in a grid, a header and a message, and always names its time zone. The
exact ISO value stays in the record's envelope and in CSV downloads.
"""

from __future__ import annotations

from datetime import datetime, timezone

from memory_core.clock import parse_ts, to_utc

TIME_ZONE = "UTC"
# moment.js tokens for st.column_config.DatetimeColumn; show_time writes the same layout as text.
GRID_FORMAT = "D MMM YYYY, HH:mm:ss"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def show_time(value: object, missing: str = "not yet") -> str:
    """``value`` (an ISO string or a datetime) as ``20 Apr 2026, 09:15:00 UTC``; ``missing`` when it
    is empty, and the text unchanged when it is not a timestamp (never an exception)."""
    if value is None or value == "":
        return missing
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = parse_ts(str(value))
        except (ValueError, TypeError):
            return str(value)
        if moment is None:
            return str(value)
    moment = to_utc(moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc))
    # Spelt out rather than strftime: "%b" follows the locale and "%Y" drops the zeros of years < 1000.
    return (f"{moment.day} {_MONTHS[moment.month - 1]} {moment.year:04d}, "
            f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d} {TIME_ZONE}")
