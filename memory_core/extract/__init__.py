"""Session extraction (write path B): extractor, reviewer, validator, durable runs and the worker.

Entry points: :class:`ExtractionRunner` (claim and process runs), :func:`worker.run_worker`, and
the service methods ``run_extraction``, ``extraction_runs``, ``extraction_run``,
``retry_extraction``, ``enqueue_extraction`` and ``extract_transcript``. See docs/extraction.md.
"""

from .candidates import Candidate, CandidateRevision, ExtractionOutput, ReviewDecision, ReviewItem, SummaryProposal, TemporalClaim, Transcript, Turn
from .runner import ExtractionRunner
from .runs import RunDetail

__all__ = [
    "Candidate", "CandidateRevision", "ExtractionOutput", "ExtractionRunner", "ReviewDecision", "ReviewItem", "RunDetail",
    "SummaryProposal", "TemporalClaim", "Transcript", "Turn",
]
