"""Candidate generation: the query embedding, the dense, lexical and entity generators, the
name-stripped question whose cosines order the fusion's fourth list, and the generators' historical
re-run (:mod:`.historical`) that the retriever hands the gate for its lifecycle probe.

Each generator is a plain function of (store or index, filter, query) that returns candidates in
its own rank order, so :func:`.historical.historical_candidates` can rerun it with a wider filter;
the stages wrap them for the pipeline. Every query carries the hard filter (``store.search_queries``), and
dense search runs under its mask, so nothing outside the filter is ever proposed.
"""

from .dense import DenseStage, dense_candidates
from .embedding import PendingVector, QueryEmbeddingStage
from .entity import EntityStage, entity_candidates
from .historical import historical_candidates
from .lexical import LexicalStage, lexical_candidates

__all__ = ["DenseStage", "EntityStage", "LexicalStage", "PendingVector", "QueryEmbeddingStage", "dense_candidates",
           "entity_candidates", "historical_candidates", "lexical_candidates"]
