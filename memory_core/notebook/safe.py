"""The one guard every notebook display goes through: a failing HTML repr warns and shows text.

Jupyter calls ``_repr_html_`` while printing a cell's result; an exception there replaces the
object with a traceback. :func:`safe_html` turns a renderer's failure into a ``RuntimeWarning``
and an escaped plain-text rendering of the object instead.
"""

from __future__ import annotations

import functools
import html
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., str])

FALLBACK_LIMIT = 20_000  # characters of the plain-text fallback


def plain_text(obj: Any) -> str:
    """``repr(obj)``, or the bare ``object.__repr__`` when that fails too."""
    try:
        text = repr(obj)
    except Exception:  # noqa: BLE001 - the fallback must not fail in turn
        text = object.__repr__(obj)
    if len(text) > FALLBACK_LIMIT:
        text = text[:FALLBACK_LIMIT] + f"… ({len(text) - FALLBACK_LIMIT} more characters)"
    return text


def fallback_html(obj: Any) -> str:
    """The plain-text rendering of ``obj`` as escaped, preformatted HTML."""
    return f"<pre>{html.escape(plain_text(obj))}</pre>"


def safe_html(render: F) -> F:
    """Decorate ``render(obj, ...) -> str`` so that it never raises.

    On an exception it emits a ``RuntimeWarning`` naming the object's type and the error, and
    returns :func:`fallback_html` of ``obj``.
    """

    @functools.wraps(render)
    def wrapper(obj: Any, *args: Any, **kwargs: Any) -> str:
        try:
            return render(obj, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - a notebook display must never raise
            warnings.warn(
                f"could not display {type(obj).__name__} as HTML ({type(exc).__name__}: {exc}); showing plain text instead",
                RuntimeWarning, stacklevel=2,
            )
            return fallback_html(obj)

    return wrapper  # type: ignore[return-value]
