"""The admin app's plotly charts for notebook objects.

Every figure comes from :mod:`memory_core.charts`, called on the same data the admin app passes
(generator rows from the trace; ``service.stats()``; the overview series of
:mod:`memory_core.store.overview`, which ``admin_ui.queries`` also uses), so a chart looks the
same in both places. Add a
new chart to ``memory_core.charts`` first, then expose it here.
"""

from __future__ import annotations

from typing import Any

from .. import charts
from ..store import overview
from .run_display import latest_stages

SCORE_TITLE = "Per-generator score (cosine, BM25)"  # the search explorer's title for the score chart


def _trace(obj: Any):
    return getattr(obj, "trace", obj)


def ranks_figure(response):
    """Each candidate's rank in each generator (dense, lexical, entity), even for an empty search."""
    return charts.generator_ranks_figure(charts.generator_rows_from_trace(_trace(response)), "rank")


def scores_figure(response):
    """Each candidate's cosine / BM25 score per generator."""
    return charts.generator_ranks_figure(charts.generator_rows_from_trace(_trace(response)), "score", SCORE_TITLE)


def latency_figure(response):
    """Milliseconds per pipeline stage of a search (a ``SearchResponse`` or its ``SearchTrace``)."""
    return charts.stage_latency_figure(_trace(response).work_timings())


def composition_figure(service):
    """Records by type, status, scope kind and source kind (the overview page's first chart)."""
    return charts.store_composition_figure(service.stats())


def records_over_time_figure(service):
    """Records created per day by type (the overview page's chart)."""
    return charts.records_over_time_figure(overview.records_over_time(service.store))


def search_latency_figure(service):
    """Histogram of logged search latencies with p50 / p95 (the overview page's chart)."""
    return charts.latency_histogram_figure(overview.search_latencies(service.store))


def extraction_stages_figure(detail):
    """Milliseconds per stage of an extraction run's latest attempt (the extraction page's chart)."""
    return charts.stage_latency_figure(latest_stages(detail), "Extraction stages")
