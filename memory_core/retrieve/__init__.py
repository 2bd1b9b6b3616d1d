"""Retrieval: the memory_search pipeline, its explanations, trace and search log.

``retriever_for(service).search(...)`` (or ``MemoryService.search``) runs the stages of
:func:`~memory_core.retrieve.retriever.build_pipeline` and returns a :class:`SearchResponse`;
``load_search`` rebuilds a past response from the log and ``replay_search`` runs it again. The
memory_search tool lives in :mod:`memory_core.retrieve.tool` and is registered by
``memory_core.tools``.
"""

from .model import (
    Candidate,
    ResponseExplanation,
    ResultExplanation,
    SearchRequest,
    SearchResponse,
    SearchResult,
    SearchTrace,
    StageTrace,
)
from .retriever import Retriever, build_pipeline, build_request, retriever_for
from .search_log import list_searches, load_search, replay_search

__all__ = [
    "Candidate", "ResponseExplanation", "ResultExplanation", "Retriever", "SearchRequest", "SearchResponse",
    "SearchResult", "SearchTrace", "StageTrace", "build_pipeline", "build_request", "list_searches", "load_search",
    "replay_search", "retriever_for",
]
