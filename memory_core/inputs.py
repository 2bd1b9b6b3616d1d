"""Checks shared by every entry point that accepts text or dates from outside (tools, host API).

SQLite stores text as UTF-8, so a string holding a lone surrogate (possible in Python, e.g. from
``json.loads('"\\ud800"')``) cannot be stored; it must be refused as bad input before any
write, not fail inside the transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .clock import parse_ts
from .errors import InvalidInputError


def encodable(text: str) -> bool:
    """True if ``text`` can be stored as UTF-8 (no lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escape_unstorable(text: str) -> str:
    """``text`` with each lone surrogate written out as a visible ``\\udXXX`` escape (storable)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def loggable(value: Any, _depth: int = 0) -> Any:
    """``value`` (a string, or JSON-like lists and dicts of them) safe to store in a log row.

    Input is refused when it holds a lone surrogate, but the row that records the refusal (or an
    error message quoting such text) must still be written: every unstorable string, dict keys
    included, is stored in the escaped form of :func:`escape_unstorable`; anything nested deeper
    than a log needs is cut. Other values are unchanged.
    """
    if isinstance(value, str):
        return value if encodable(value) else escape_unstorable(value)
    if _depth > 64:
        return "[nested too deeply]"
    if isinstance(value, dict):
        return {loggable(k, _depth + 1) if isinstance(k, str) else k: loggable(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [loggable(v, _depth + 1) for v in value]
    return value


def check_text(value: Any, field: str) -> Any:
    """Return ``value``; raise InvalidInputError if it is a string SQLite cannot store."""
    if isinstance(value, str) and not encodable(value):
        raise InvalidInputError(f"{field} contains characters that are not valid Unicode text (a lone surrogate)", field=field)
    return value


def check_texts(value: Any, field: str = "arguments", _depth: int = 0) -> None:
    """Walk strings inside lists and dicts (bounded depth) and refuse unstorable ones."""
    if _depth > 32:
        raise InvalidInputError(f"{field} is nested too deeply", field=field)
    if isinstance(value, str):
        check_text(value, field)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(key, field)
            check_texts(item, f"{field}.{key}" if _depth else str(key), _depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_texts(item, field, _depth + 1)


def parse_input_ts(value: Any, field: str) -> datetime | None:
    """A caller-supplied timestamp as an aware UTC datetime, or InvalidInputError naming ``field``."""
    try:
        return parse_ts(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"{field} must be an ISO-8601 date or time within the years 1-9999 (UTC): {str(value)[:80]!r}", field=field
        ) from exc
