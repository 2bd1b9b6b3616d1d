"""Retrieval: the memory_search pipeline, its explanations, trace and search log.

``service.retriever.search(request)`` (or ``MemoryService.search``) checks a :class:`SearchRequest`,
runs the stages of :func:`~memory_core.retrieve.retriever.default_stages` and returns a
:class:`SearchResponse`; ``search_batch`` runs many; ``Retriever.load`` rebuilds a past response
from the log and ``Retriever.replay`` runs it again. Each stage declares the hand-offs it reads and
writes (:mod:`.pipeline`) and can run alone (:func:`run_stage`). The memory_search tool lives in
:mod:`memory_core.tools.search_tool`.
"""

from .pipeline import Pipeline, SearchRun, Stage, StageContractError, run_stage
from .recorder import StageRecorder
from .request import SEARCH_ORIGINS, SearchRequest
from .retriever import Retriever, build_pipeline, default_stages
from .search_log import list_searches, load_search
from .search_types import Candidate, ResponseExplanation, ResultExplanation, SearchResponse, SearchResult, SearchTrace, StageTrace
from .services import PassageScorer, SearchServices

__all__ = [
    "Candidate", "PassageScorer", "Pipeline", "ResponseExplanation", "ResultExplanation", "Retriever", "SEARCH_ORIGINS",
    "SearchRequest", "SearchResponse", "SearchResult", "SearchRun", "SearchServices", "SearchTrace", "Stage",
    "StageContractError", "StageRecorder", "StageTrace", "build_pipeline", "default_stages", "list_searches", "load_search",
    "run_stage",
]
