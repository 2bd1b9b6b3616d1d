"""Jupyter integration: rich displays, pandas frames, the admin app's charts, the app itself.

The objects people look at display themselves (``_repr_html_``) and convert to pandas
(``to_dataframe()``): ``MemoryService`` (store summary), ``SearchResponse``, ``SearchResult``,
``ResultExplanation``, ``SearchTrace``, ``StageTrace``, ``Record``, ``RunDetail`` and
:class:`RecordView` (``service.show_record(id)``: a record with its lineage). Their methods
ask :mod:`memory_core.display`, whose registry calls :func:`.displays.register_displays` on the
first display to learn the renderers of this package (the data classes never import it, and no
import registers anything). Every renderer goes through :func:`safe_html`, so a display
that fails warns and shows plain text, and every piece of data is HTML-escaped.

- :mod:`.figures`: the admin app's plotly charts from :mod:`memory_core.charts`.
- :func:`launch_app` / :class:`AdminApp`: the admin app for the current store, inline.
- :func:`open_demo`: the demo store, built on first use, opened on a scratch copy.
"""

from ..extras import require_extra

# plotly and pandas come with the app extra: say so in one line rather than fail deep inside plotly's import.
require_extra("app", "the notebook helpers (displays, DataFrames, charts)", ("plotly", "pandas"))

from . import figures  # noqa: E402,F401
from .demo import default_demo_path, open_demo  # noqa: E402
from .displays import register_displays  # noqa: E402
from .launcher import AdminApp, AppLaunchError, launch_app  # noqa: E402
from .record_display import RecordView  # noqa: E402
from .safe import fallback_html, safe_html  # noqa: E402

__all__ = ["AdminApp", "AppLaunchError", "RecordView", "default_demo_path", "fallback_html", "figures", "launch_app",
           "open_demo", "register_displays", "safe_html"]
