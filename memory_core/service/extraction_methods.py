"""The extraction half of the :class:`~memory_core.service.MemoryService` facade (path B).

A mixin so the facade stays small: each method delegates to ``extract.runs`` (the queue) or the
shared :class:`~memory_core.extract.runner.ExtractionRunner`, built from explicit parts.
"""

from __future__ import annotations

from datetime import datetime

from ..clock import Clock, format_ts
from ..errors import InvalidInputError
from ..extract import runs
from ..extract.deps import EntailmentJudge, ExtractionDeps
from ..extract.runner import ExtractionRunner
from ..index.vector_index import VectorIndex
from ..inputs import check_text, parse_input_ts
from ..llm import LanguageModel
from ..llm.factory import RoleModels
from ..settings import Settings
from ..store.db import Store
from ..telemetry import Telemetry
from .session import MAX_TURN_CHARS, TURN_ROLES


class ExtractionMethods:
    """Extraction runs: queue, run, retry, inspect, and transcripts uploaded for extraction."""

    # Provided by MemoryService (with the methods access, search and write).
    store: Store
    clock: Clock
    settings: Settings
    index: VectorIndex
    judge: EntailmentJudge
    llm: LanguageModel | None
    models: RoleModels
    _extraction: ExtractionRunner | None
    telemetry: Telemetry

    def extraction_deps(self) -> ExtractionDeps:
        """The parts an extraction runner works with, taken from this service."""
        return ExtractionDeps(
            store=self.store, clock=self.clock, index=self.index, settings=self.settings.extraction, access=self.access,
            write=lambda request, access: self.write(request, access), judge=self.judge, llm=self.llm,
            models=self.models, search=self.search, housekeeping=self.settings.housekeeping, telemetry=self.telemetry,
        )

    @property
    def extraction(self) -> ExtractionRunner:
        """The shared extraction runner, built from settings on first use (assignable, e.g. by tests)."""
        if self._extraction is None:
            self._extraction = ExtractionRunner(self.extraction_deps())
        return self._extraction

    @extraction.setter
    def extraction(self, runner: ExtractionRunner) -> None:
        self._extraction = runner

    def run_extraction(self, run_id: str | None = None, *, worker_id: str | None = None):
        """Process extraction run ``run_id`` now, or the oldest due run; a ``RunDetail`` or None."""
        return self.extraction.run(run_id, worker_id) if run_id else self.extraction.run_next(worker_id)

    def enqueue_extraction(self, session_id: str, *, actor: str, trigger: str = "manual") -> str:
        """Queue a new extraction run for an ended session; returns the run id."""
        return runs.enqueue(self.store, self.clock, session_id, trigger=trigger, actor=actor)

    def retry_extraction(self, run_id: str, *, actor: str, run_now: bool = False, worker_id: str | None = None):
        """Requeue a failed or backing-off run (one extra attempt if its attempts are spent)."""
        runs.request_retry(self.store, self.clock, run_id, actor=actor, max_attempts=self.settings.extraction.max_attempts)
        if run_now:
            return self.extraction.run(run_id, worker_id)
        return runs.get_run(self.store, run_id)

    def extraction_runs(self, *, status: str | None = None, session_id: str | None = None, limit: int = 50, offset: int = 0) -> list[dict]:
        """Extraction runs, newest first, with candidate and write counts of their latest attempt."""
        return runs.list_runs(self.store, status=status, session_id=session_id, limit=limit, offset=offset)

    def extraction_run(self, run_id: str, attempt: int | None = None):
        """One run end to end (``RunDetail``): attempts, stage timings, candidates with verdicts and outcomes."""
        return runs.get_run(self.store, run_id, attempt)

    def extract_transcript(self, *, agent_id: str, user_id: str, turns: list[dict], project_id: str | None = None,
                           session_id: str | None = None, actor: str = "admin", run_now: bool = True,
                           reference_time: datetime | str | None = None):
        """Create a session from uploaded turns ({role, content, at?}), end it and run extraction.

        A turn's relative dates ("next Tuesday") resolve against its time: its own ``at``, else
        ``reference_time`` (when the conversation happened, as the person states it), else now
        (:meth:`transcript_time_basis` says which, in words). Every turn is checked before the
        session is created, so a bad one records nothing."""
        if not isinstance(turns, list) or not turns:
            raise InvalidInputError("an uploaded transcript needs at least one turn", field="turns")
        for i, turn in enumerate(turns):
            if not isinstance(turn, dict) or not isinstance(turn.get("role"), str) or not isinstance(turn.get("content"), str):
                raise InvalidInputError(f"turn {i} needs a 'role' and a 'content' string", field="turns")
            # the checks record_turn makes, made first: a bad turn must not leave a half-recorded session
            if turn["role"] not in TURN_ROLES:
                raise InvalidInputError(f"turn {i}: role must be one of {', '.join(TURN_ROLES)}", field="turns")
            if len(turn["content"]) > MAX_TURN_CHARS:
                raise InvalidInputError(f"turn {i} is longer than {MAX_TURN_CHARS} characters", field="turns")
            check_text(turn["content"], f"turn {i} content")
        given = self._reference_time(reference_time)
        times = [parse_input_ts(turn["at"], f"turn {i} at") if turn.get("at") is not None else given
                 for i, turn in enumerate(turns)]
        session = self.start_session(agent_id=agent_id, user_id=user_id, project_id=project_id, session_id=session_id)
        for turn, at in zip(turns, times):
            session.record_turn(turn["role"], turn["content"], at=at)
        run_id = session.end(trigger="upload", enqueue_actor=actor, always_enqueue=True)
        if run_now:
            return self.extraction.run(run_id)
        return runs.get_run(self.store, run_id)

    def _reference_time(self, value: datetime | str | None) -> datetime | None:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        given = parse_input_ts(value, "reference_time")
        if given > self.clock.now():
            raise InvalidInputError(f"the conversation's time {format_ts(given)} is in the future (now is "
                                    f"{format_ts(self.clock.now())})", field="reference_time")
        return given

    def transcript_time_basis(self, turns: list[dict], reference_time: datetime | str | None = None) -> str:
        """In words, what the relative dates of these turns will resolve against: the turns' own
        times, the time the person gave, or the upload time (now), and for how many turns each."""
        given = self._reference_time(reference_time)
        own = sum(1 for t in turns if isinstance(t, dict) and t.get("at") is not None)
        rest = len(turns) - own
        parts = []
        if own:
            parts.append(f"the turns' own times ({own} of {len(turns)} turns)" if rest else "the turns' own times")
        if rest:
            if given is not None:
                parts.append(f"the time you gave, {format_ts(given)}" + (f" ({rest} turns without a time)" if own else ""))
            else:
                parts.append(f"the upload time, {format_ts(self.clock.now())}"
                             + (f" ({rest} turns without a time)" if own else " (no turn has a time and none was given)"))
        return "Relative dates resolve against " + "; ".join(parts) + "."
