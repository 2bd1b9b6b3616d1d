"""Display hooks: how data classes show themselves in Jupyter without importing notebook code.

Data classes in the lower layers (``Record``, ``SearchResponse``, ``RunDetail``, the service...)
implement ``_repr_html_`` and ``to_dataframe`` by calling :func:`html` and :func:`frame` here. The
renderers live in :mod:`memory_core.notebook` and register themselves with :func:`register`, so the
dependency points from the notebook down to the data, never up.

The first display of anything loads the registered backend module by name (like pandas loads its
plotting backend), so ``response`` shows richly in Jupyter even when nobody imported
``memory_core.notebook`` first. A missing renderer warns and falls back to escaped text.
"""

from __future__ import annotations

import html as _html
import importlib
import threading
import warnings
from collections.abc import Callable
from typing import Any

BACKEND = "memory_core.notebook.displays"

_html_renderers: dict[type, Callable[[Any], str]] = {}
_frame_builders: dict[type, Callable[[Any], Any]] = {}
_views: dict[str, Callable[..., Any]] = {}
_lock = threading.RLock()
_backend_state = {"loaded": False}


def register(cls: type, *, html: Callable[[Any], str] | None = None, frame: Callable[[Any], Any] | None = None) -> None:
    """Use ``html(obj)`` for ``cls._repr_html_`` and ``frame(obj)`` for ``cls.to_dataframe``."""
    if html is not None:
        _html_renderers[cls] = html
    if frame is not None:
        _frame_builders[cls] = frame


def register_view(name: str, factory: Callable[..., Any]) -> None:
    """A named display object built on request (``service.show_record`` asks for ``"record"``)."""
    _views[name] = factory


def _load_backend() -> None:
    # Held across the import so a concurrent first display waits for the registrations.
    with _lock:
        if _backend_state["loaded"]:
            return
        try:
            importlib.import_module(BACKEND)
        except Exception as exc:  # a display must never raise: warn and fall back to text
            _backend_state["error"] = exc
            warnings.warn(f"notebook displays are unavailable ({type(exc).__name__}: {exc})", RuntimeWarning, stacklevel=3)
        finally:
            _backend_state["loaded"] = True


def _lookup(table: dict[type, Callable], obj: Any) -> Callable | None:
    for cls in type(obj).__mro__:
        if cls in table:
            return table[cls]
    return None


def html(obj: Any) -> str:
    """The registered HTML rendering of ``obj``, or its escaped repr (with a warning)."""
    renderer = _lookup(_html_renderers, obj)
    if renderer is None:
        _load_backend()
        renderer = _lookup(_html_renderers, obj)
    if renderer is None:
        warnings.warn(f"no HTML display registered for {type(obj).__name__}; showing text", RuntimeWarning, stacklevel=2)
        return f"<pre>{_html.escape(repr(obj))}</pre>"
    return renderer(obj)


def frame(obj: Any) -> Any:
    """The registered pandas DataFrame of ``obj``; raises TypeError when none is registered."""
    builder = _lookup(_frame_builders, obj)
    if builder is None:
        _load_backend()
        builder = _lookup(_frame_builders, obj)
    if builder is None:
        failure = _backend_state.get("error")
        if getattr(failure, "code", None) == "missing_extra":  # e.g. pandas is not installed: say which extra
            raise failure
        raise TypeError(f"no DataFrame conversion registered for {type(obj).__name__}")
    return builder(obj)


def view(name: str, *args: Any, **kwargs: Any) -> Any:
    """Build the display object registered as ``name``."""
    if name not in _views:
        _load_backend()
    if name not in _views:
        raise LookupError(f"no display view {name!r} is registered (is memory_core.notebook importable?)")
    return _views[name](*args, **kwargs)
