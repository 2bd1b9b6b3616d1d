"""Retrieval: the memory_search pipeline, its explanations, trace and search log.

``service.retriever.search(...)`` (or ``MemoryService.search``) runs the stages of
:func:`~memory_core.retrieve.retriever.default_stages` and returns a :class:`SearchResponse`;
``Retriever.load`` rebuilds a past response from the log and ``Retriever.replay`` runs it again.
The memory_search tool lives in :mod:`memory_core.tools.search_tool`.
"""

from .search_types import (
    Candidate,
    ResponseExplanation,
    ResultExplanation,
    SearchRequest,
    SearchResponse,
    SearchResult,
    SearchTrace,
    StageTrace,
)
from .pipeline import PassageScorer, Pipeline, SearchContext, SearchServices, Stage
from .retriever import Retriever, build_pipeline, build_request, default_stages
from .search_log import list_searches, load_search

__all__ = [
    "Candidate", "PassageScorer", "Pipeline", "ResponseExplanation", "ResultExplanation", "Retriever", "SearchContext",
    "SearchRequest", "SearchResponse", "SearchResult", "SearchServices", "SearchTrace", "Stage", "StageTrace",
    "build_pipeline", "build_request", "default_stages", "list_searches", "load_search",
]
