"""What the gate stage reads and writes (its helpers in :mod:`.names` and :mod:`.probe` take the same inputs)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...settings import RetrievalSettings
from ..filters import HardFilter, IndexMask
from ..generate.lexical_score import LexicalResult, Readable
from ..generate.name_stripped import RestQuery
from ..request import SearchRequest
from ..search_types import Candidate
from ..window import FilterOutcome


@dataclass(slots=True)
class GateInputs:
    request: SearchRequest
    settings: RetrievalSettings
    query: str
    filter: HardFilter
    mask: IndexMask
    readable: Readable
    doclists: dict
    lexical: LexicalResult | None
    entities: list[dict]
    query_vector: np.ndarray | None
    pool: dict[int, Candidate]
    generated: dict[str, list[int]]
    ranking: list[Candidate]
    rest_query: RestQuery | None
    filter_outcome: FilterOutcome | None = None  # what the hard filter and its event-time window left


@dataclass(slots=True)
class GateOutputs:
    ranking: list[Candidate]  # the survivors (none when the set is refused)
    gate: dict  # the gate's summary: floors, best signals, the decision and its reason (the response explanation's ``gate``)
    floors_deferred: bool  # the reranker decides instead of the floors (reranker_mode replace_floors)
    empty_reason: str | None = None
