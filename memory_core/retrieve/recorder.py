"""What a running stage records about itself; the pipeline (:mod:`.pipeline`) owns the trace and the timing."""

from __future__ import annotations

from typing import Any

from .search_types import Candidate, StageTrace


class StageRecorder:
    """What a running stage records about itself (the pipeline owns the trace and the timing)."""

    __slots__ = ("trace", "dropped")

    def __init__(self, trace: StageTrace) -> None:
        self.trace = trace
        self.dropped: set[str] = set()

    def io(self, inputs: dict[str, Any] | None = None, outputs: dict[str, Any] | None = None) -> None:
        """Record what the stage consumed and produced (ids and scores, never text)."""
        if inputs:
            self.trace.inputs.update(inputs)
        if outputs:
            self.trace.outputs.update(outputs)

    def note(self, text: str, first: bool = False) -> None:
        """Add a note to the trace (``first``: before the others, as the one the stage table shows)."""
        if first:
            self.trace.notes.insert(0, text)
        else:
            self.trace.notes.append(text)

    def skip(self, reason: str) -> None:
        """Mark the stage as skipped (it did nothing), with why."""
        self.trace.status = "skipped"
        self.trace.notes.append(reason)

    def drop(self, candidate: Candidate, reason: str) -> None:
        """Record that ``candidate`` leaves the ranking and why (the only way a candidate may leave it)."""
        candidate.dropped_at = self.trace.name
        candidate.dropped_reason = reason
        self.trace.dropped.append({"id": candidate.record_id, "reason": reason})
        self.dropped.add(candidate.record_id)

    def fail(self, reason: str) -> None:
        """Mark the stage as failed, with why (work it handed off failed after the stage returned)."""
        self.trace.status = "failed"
        self.trace.notes.append(reason)

    @property
    def stage(self) -> str:
        """The name of the stage this recorder belongs to."""
        return self.trace.name
