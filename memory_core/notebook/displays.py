"""Registers the notebook renderers with :mod:`memory_core.display`.

The data classes only know the registry; this module (loaded by name on the first display, or by
importing :mod:`memory_core.notebook`) tells it how each one looks in Jupyter.
"""

from __future__ import annotations

from .. import display
from ..extract.runs import RunDetail
from ..retrieve.ambient import AmbientProfile
from ..retrieve.search_types import ResultExplanation, SearchResponse, SearchResult, SearchTrace, StageTrace
from ..service import MemoryService
from ..store.records import Record
from . import ambient_display, record_display, run_display, search_display, store_display

display.register(Record, html=record_display.record_html, frame=record_display.record_frame)
display.register(RunDetail, html=run_display.run_html, frame=run_display.run_frame)
display.register(StageTrace, html=search_display.stage_html, frame=search_display.stage_frame)
display.register(SearchTrace, html=search_display.trace_html, frame=search_display.trace_frame)
display.register(ResultExplanation, html=search_display.explanation_html, frame=search_display.explanation_frame)
display.register(SearchResult, html=search_display.result_html, frame=search_display.result_frame)
display.register(SearchResponse, html=search_display.response_html, frame=search_display.response_frame)
display.register(MemoryService, html=store_display.service_html, frame=store_display.service_frame)
display.register(AmbientProfile, html=ambient_display.profile_html, frame=ambient_display.profile_frame)
display.register_view("record", record_display.RecordView)
