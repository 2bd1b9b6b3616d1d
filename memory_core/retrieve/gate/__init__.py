"""The empty-result gate: the stage (:mod:`.stage`), its decision as pure functions (:mod:`.rules`,
:mod:`.decision`, in words :mod:`.reasons`), the names of a query (:mod:`.names`), the word-level
support for the rest of a question (:mod:`.rest_cover`), the known-name model (:mod:`.model`), the
lifecycle probe (:mod:`.probe`) and the tracer that records a decision (:mod:`.trace`)."""

from .rules import Evidence, GateFloors, NameRest, SetSignals, candidate_strong, passes, rest_supported, set_strong
from .stage import GateStage

__all__ = ["Evidence", "GateFloors", "GateStage", "NameRest", "SetSignals", "candidate_strong", "passes", "rest_supported",
           "set_strong"]
