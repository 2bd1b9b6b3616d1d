"""Display hooks: how data classes show themselves in Jupyter without importing notebook code.

Data classes in the lower layers (``Record``, ``SearchResponse``, ``RunDetail``, the service...)
implement ``_repr_html_`` and ``to_dataframe`` by calling :func:`html` and :func:`frame` here. The
renderers live in :mod:`memory_core.notebook`, so the dependency points from the notebook down to
the data, never up.

Nothing registers itself at import. The library's :data:`registry` starts empty and is filled by
one explicit call, made on the first display: it imports the module named in :data:`LOADER` and
calls its function with the registry (``memory_core.notebook.displays.register_displays``), the way
pandas loads its plotting backend by name. So ``response`` shows richly in Jupyter even when nobody
imported ``memory_core.notebook`` first, and importing any module leaves the registry as it was.
A missing renderer warns and falls back to escaped text.
"""

from __future__ import annotations

import html as _html
import importlib
import threading
import warnings
from collections.abc import Callable
from typing import Any

# "module:function": the function fills a registry with the notebook's renderers.
LOADER = "memory_core.notebook.displays:register_displays"


def _lookup(table: dict[type, Callable], obj: Any) -> Callable | None:
    for cls in type(obj).__mro__:
        if cls in table:
            return table[cls]
    return None


class DisplayRegistry:
    """Renderers by class (subclasses included), DataFrame builders and named views.

    ``loader`` ("module:function", or None) is called once, with the registry, the first time a
    lookup finds nothing: it registers the renderers. A failing loader warns; displays then fall
    back to text."""

    def __init__(self, loader: str | None = None) -> None:
        self.loader = loader
        self._html: dict[type, Callable[[Any], str]] = {}
        self._frames: dict[type, Callable[[Any], Any]] = {}
        self._views: dict[str, Callable[..., Any]] = {}
        self._lock = threading.RLock()
        self.loaded = loader is None
        self.load_error: BaseException | None = None

    def register(self, cls: type, *, html: Callable[[Any], str] | None = None,
                 frame: Callable[[Any], Any] | None = None) -> None:
        """Use ``html(obj)`` for ``cls._repr_html_`` and ``frame(obj)`` for ``cls.to_dataframe``."""
        if html is not None:
            self._html[cls] = html
        if frame is not None:
            self._frames[cls] = frame

    def register_view(self, name: str, factory: Callable[..., Any]) -> None:
        """A named display object built on request (``service.show_record`` asks for ``"record"``)."""
        self._views[name] = factory

    def contents(self) -> dict[str, list[str]]:
        """What is registered, by name (for a test or a curious reader)."""
        return {"html": sorted(c.__qualname__ for c in self._html), "frame": sorted(c.__qualname__ for c in self._frames),
                "views": sorted(self._views)}

    def load(self) -> None:
        """Call the loader once (a concurrent first display waits for its registrations)."""
        with self._lock:
            if self.loaded:
                return
            try:
                module, _, function = str(self.loader).partition(":")
                getattr(importlib.import_module(module), function)(self)
            except Exception as exc:  # a display must never raise: warn and fall back to text
                self.load_error = exc
                warnings.warn(f"notebook displays are unavailable ({type(exc).__name__}: {exc})", RuntimeWarning, stacklevel=5)
            finally:
                self.loaded = True

    def _find(self, table: dict, obj: Any) -> Callable | None:
        found = _lookup(table, obj)
        if found is None and not self.loaded:
            self.load()
            found = _lookup(table, obj)
        return found

    def html(self, obj: Any) -> str:
        """The registered HTML rendering of ``obj``, or its escaped repr (with a warning)."""
        renderer = self._find(self._html, obj)
        if renderer is None:
            warnings.warn(f"no HTML display registered for {type(obj).__name__}; showing text", RuntimeWarning, stacklevel=3)
            return f"<pre>{_html.escape(repr(obj))}</pre>"
        return renderer(obj)

    def frame(self, obj: Any) -> Any:
        """The registered pandas DataFrame of ``obj``; raises TypeError when none is registered."""
        builder = self._find(self._frames, obj)
        if builder is None:
            if getattr(self.load_error, "code", None) == "missing_extra":  # e.g. pandas is not installed: say which extra
                raise self.load_error
            raise TypeError(f"no DataFrame conversion registered for {type(obj).__name__}")
        return builder(obj)

    def view(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Build the display object registered as ``name``."""
        if name not in self._views and not self.loaded:
            self.load()
        if name not in self._views:
            raise LookupError(f"no display view {name!r} is registered (is memory_core.notebook importable?)")
        return self._views[name](*args, **kwargs)


# The library's registry: empty until the first display calls LOADER with it.
registry = DisplayRegistry(LOADER)


def html(obj: Any) -> str:
    """``registry.html(obj)``: what a data class's ``_repr_html_`` returns."""
    return registry.html(obj)


def frame(obj: Any) -> Any:
    """``registry.frame(obj)``: what a data class's ``to_dataframe`` returns."""
    return registry.frame(obj)


def view(name: str, *args: Any, **kwargs: Any) -> Any:
    """``registry.view(name, ...)``: a named display object."""
    return registry.view(name, *args, **kwargs)
