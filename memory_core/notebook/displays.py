"""The notebook's renderers, handed to a :class:`~memory_core.display.DisplayRegistry` by
:func:`register_displays`.

Importing this module registers nothing. The library's registry calls :func:`register_displays`
on the first display (``memory_core.display.LOADER`` names it); a test or a host can fill a
registry of its own the same way.
"""

from __future__ import annotations

from ..display import DisplayRegistry
from ..extract.runs import RunDetail
from ..retrieve.ambient import AmbientProfile
from ..retrieve.search_types import ResultExplanation, SearchResponse, SearchResult, SearchTrace, StageTrace
from ..service import MemoryService
from ..store.records import Record
from . import ambient_display, record_display, run_display, search_display, store_display


def register_displays(registry: DisplayRegistry) -> None:
    """Register the HTML rendering and DataFrame of each data class, and the ``"record"`` view."""
    registry.register(Record, html=record_display.record_html, frame=record_display.record_frame)
    registry.register(RunDetail, html=run_display.run_html, frame=run_display.run_frame)
    registry.register(StageTrace, html=search_display.stage_html, frame=search_display.stage_frame)
    registry.register(SearchTrace, html=search_display.trace_html, frame=search_display.trace_frame)
    registry.register(ResultExplanation, html=search_display.explanation_html, frame=search_display.explanation_frame)
    registry.register(SearchResult, html=search_display.result_html, frame=search_display.result_frame)
    registry.register(SearchResponse, html=search_display.response_html, frame=search_display.response_frame)
    registry.register(MemoryService, html=store_display.service_html, frame=store_display.service_frame)
    registry.register(AmbientProfile, html=ambient_display.profile_html, frame=ambient_display.profile_frame)
    registry.register_view("record", record_display.RecordView)
