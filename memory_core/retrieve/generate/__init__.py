"""Candidate generation: the query embedding, the dense, lexical and entity generators, and the
name-stripped question whose cosines order the fusion's fourth list.

Each generator is a plain function of (store or index, filter, query) that returns candidates in
its own rank order, so the gate's lifecycle probe can rerun it with a different filter; the stages
wrap them for the pipeline. Every query carries the hard filter (``store.search_queries``), and
dense search runs under its mask, so nothing outside the filter is ever proposed.
"""

from .dense import DenseStage, dense_candidates
from .embedding import PendingVector, QueryEmbeddingStage
from .entity import EntityStage, entity_candidates
from .lexical import LexicalStage, lexical_candidates

__all__ = ["DenseStage", "EntityStage", "LexicalStage", "PendingVector", "QueryEmbeddingStage", "dense_candidates",
           "entity_candidates", "lexical_candidates"]
