"""Functions behind the service's extraction methods (admin app, notebooks, CLI)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidInputError
from . import runs
from .worker import runner_for


def run_extraction(service, run_id: str | None = None, *, worker_id: str | None = None) -> runs.RunDetail | None:
    """Process ``run_id`` now (or the oldest due run); the same claim as the worker."""
    runner = runner_for(service)
    return runner.run(run_id, worker_id) if run_id else runner.run_next(worker_id)


def retry_extraction(service, run_id: str, *, actor: str, run_now: bool = False, worker_id: str | None = None) -> runs.RunDetail:
    """Requeue a failed (or backing-off) run, granting an extra attempt if its attempts are spent."""
    settings = service.settings.extraction
    runs.request_retry(service.store, service.clock, run_id, actor=actor, max_attempts=settings.max_attempts)
    if run_now:
        return runner_for(service).run(run_id, worker_id)
    return runs.get_run(service.store, run_id)


def extract_transcript(
    service, *, agent_id: str, user_id: str, turns: list[dict[str, Any]], project_id: str | None = None,
    session_id: str | None = None, actor: str = "admin", run_now: bool = True,
) -> runs.RunDetail:
    """Create a session from ``turns`` ({role, content, at?}), end it, queue extraction and (by default) run it."""
    if not isinstance(turns, list) or not turns:
        raise InvalidInputError("an uploaded transcript needs at least one turn", field="turns")
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or not isinstance(turn.get("role"), str) or not isinstance(turn.get("content"), str):
            raise InvalidInputError(f"turn {i} needs a 'role' and a 'content' string", field="turns")
    session = service.start_session(agent_id=agent_id, user_id=user_id, project_id=project_id, session_id=session_id)
    for turn in turns:
        session.record_turn(turn["role"], turn["content"], at=turn.get("at"))
    run_id = session.end()
    if run_id is None:
        run_id = runs.enqueue(service.store, service.clock, session.id, trigger="upload", actor=actor)
    else:
        with service.store.transaction() as conn:
            conn.execute("UPDATE extraction_runs SET trigger = 'upload' WHERE id = ?", (run_id,))
    if run_now:
        return runner_for(service).run(run_id)
    return runs.get_run(service.store, run_id)
