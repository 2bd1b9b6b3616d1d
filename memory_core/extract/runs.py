"""Extraction runs as durable jobs in the store, claimed with a lease.

A run is ``queued`` → ``running`` (claimed: ``attempts`` + 1, ``claimed_by``, ``lease_until``) →
``succeeded``, or back to ``queued`` after a failed attempt (with a ``not_before`` backoff), or
``failed`` once its attempts are spent. One UPDATE claims a run; it only matches a run that is
queued and due, or running with an expired lease (its worker died), and has attempts left, so
two workers can never hold the same run. A worker's claim is also its fencing token: every later
write of that attempt checks that ``claimed_by`` and ``attempts`` still match, so a worker that
lost its lease cannot finish a run another worker has taken over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from .. import display
from ..clock import Clock, format_ts
from ..errors import ConflictError, NotFoundError
from ..ids import new_id
from ..inputs import loggable
from ..store import extract_queries as q
from ..store.db import Store, dumps, loads

RUN_STATUSES = ("queued", "running", "succeeded", "failed")


@dataclass(frozen=True)
class Claim:
    """A worker's hold on one attempt of one run."""

    run_id: str
    session_id: str
    attempt: int
    worker_id: str


class LeaseLost(Exception):
    """Another worker took the run over (this worker's lease expired)."""


def enqueue(store: Store, clock: Clock, session_id: str, *, trigger: str, actor: str) -> str:
    """Queue a new extraction run for an ended session."""
    with store.lock:
        row = q.session_row(store.conn, session_id)
    if row is None:
        raise NotFoundError(f"no session {session_id}", session_id=session_id)
    if row["ended_at"] is None:
        raise ConflictError(f"session {session_id} has not ended; extraction runs on ended sessions", session_id=session_id)
    now = format_ts(clock.now())
    run_id = new_id("run")
    with store.transaction() as conn:
        q.insert_run(conn, run_id, session_id, now, trigger)
        store.append_event(conn, at=now, kind="extraction.enqueued", actor=actor, payload={"run_id": run_id, "session_id": session_id, "trigger": trigger})
    return run_id


def claim(store: Store, clock: Clock, worker_id: str, *, lease_s: float, max_attempts: int, run_id: str | None = None) -> Claim | None:
    """Atomically take the oldest claimable run (or ``run_id``); None when there is nothing to take."""
    now_dt = clock.now()
    now = format_ts(now_dt)
    params = {"now": now, "max_attempts": max_attempts, "worker": worker_id,
              "lease": format_ts(now_dt + timedelta(seconds=lease_s)), "run_id": run_id}
    with store.transaction() as conn:
        reap_exhausted(store, conn, now, max_attempts)
        row = q.claim_run(conn, params, bool(run_id))
        if row is None:
            return None
        q.abandon_running_attempts(conn, row["id"], now, "the lease expired before the attempt finished")
        q.insert_attempt(conn, row["id"], row["attempts"], worker_id, now)
        store.append_event(conn, at=now, kind="extraction.claimed", actor=f"worker:{worker_id}",
                           payload={"run_id": row["id"], "attempt": row["attempts"], "lease_until": params["lease"]})
    return Claim(row["id"], row["session_id"], int(row["attempts"]), worker_id)


def reap_exhausted(store: Store, conn, now: str, max_attempts: int) -> list[str]:
    """Mark as failed the running runs whose lease expired with no attempts left (inside a transaction)."""
    failed = q.fail_exhausted_runs(conn, now, max_attempts)
    for run_id in failed:
        q.abandon_running_attempts(conn, run_id, now)
        store.append_event(conn, at=now, kind="extraction.failed", actor="maintenance", payload={"run_id": run_id, "reason": "attempts exhausted"})
    return failed


def holds(conn, held: Claim) -> bool:
    """Whether ``held`` is still this run's current claim (call inside the transaction that acts on it)."""
    row = q.run_claim(conn, held.run_id)
    return row is not None and row["status"] == "running" and row["claimed_by"] == held.worker_id and row["attempts"] == held.attempt


def renew(store: Store, clock: Clock, held: Claim, lease_s: float) -> None:
    """Extend the lease; raises LeaseLost when another worker has taken the run."""
    lease = format_ts(clock.now() + timedelta(seconds=lease_s))
    with store.transaction() as conn:
        if not q.extend_lease(conn, held.run_id, held.worker_id, held.attempt, lease):
            raise LeaseLost(f"run {held.run_id} attempt {held.attempt} is no longer held by {held.worker_id}")


def log_candidates(conn, held: Claim, rows: list[dict[str, Any]]) -> None:
    """Store one attempt's candidate log (inside the caller's transaction)."""
    for row in loggable(rows):  # outside text (model output, errors quoting it) must not fail the log
        q.save_candidate(conn, (held.run_id, row["idx"], held.attempt, dumps(row["candidate"]), row.get("verdict"),
                                dumps(row.get("review") or {}), row.get("outcome"), row.get("record_id"), dumps(row.get("detail") or {})))


def finish_attempt(conn, held: Claim, *, outcome: str, at: str, error: str | None, extractor: str | None,
                   reviewer: str | None, stages: dict, detail: dict) -> None:
    error, detail = loggable([error, detail])  # an error message may quote unstorable text
    q.finish_attempt_row(conn, held.run_id, held.attempt, outcome=outcome, at=at, error=error, extractor=extractor,
                         reviewer=reviewer, stages_json=dumps(stages), detail_json=dumps(detail))


def mark_failed_attempt(store: Store, conn, held: Claim, *, now_dt, error: str, backoff_s: float, max_attempts: int,
                        retryable: bool = True) -> tuple[str, str]:
    """Release a failed attempt: back to queued after the backoff, or failed when its attempts are
    spent or another attempt could not help (``retryable`` False). Returns (status, the run's error:
    ``error`` plus what happens next)."""
    now = format_ts(now_dt)
    row = q.run_attempts(conn, held.run_id, max_attempts)
    status = "failed" if not retryable or row["attempts"] >= row["lim"] else "queued"
    not_before = now_dt + timedelta(seconds=backoff_s)
    if status == "queued":
        error = (f"{error} Attempt {row['attempts']} of {row['lim']} failed; the next one is due after {format_ts(not_before)} "
                 "(a worker, `agent-memory worker`, runs it; Retry in the app runs it now).")
    elif retryable:
        error = (f"{error} That was the last of its {row['lim']} attempts (extraction.max_attempts); "
                 "Retry in the app gives it one more.")
    else:
        error = f"{error} Not retried automatically."
    error = loggable(error)  # an error message may quote unstorable text
    q.release_failed_run(conn, held.run_id, status, error, format_ts(not_before) if status == "queued" else None,
                         now if status == "failed" else None)
    store.append_event(conn, at=now, kind="extraction.failed" if status == "failed" else "extraction.attempt_failed",
                       actor=f"worker:{held.worker_id}", reason=error,
                       payload={"run_id": held.run_id, "attempt": held.attempt, "status": status, "retryable": retryable})
    return status, error


def request_retry(store: Store, clock: Clock, run_id: str, *, actor: str, max_attempts: int) -> dict:
    """Make a queued-with-backoff or failed run claimable now, granting one more attempt if needed."""
    now = format_ts(clock.now())
    with store.transaction() as conn:
        row = q.run_attempts(conn, run_id, max_attempts, with_lease=True)
        if row is None:
            raise NotFoundError(f"no extraction run {run_id}", run_id=run_id)
        if row["status"] == "succeeded":
            raise ConflictError(f"run {run_id} succeeded; queue a new run for its session instead", run_id=run_id)
        if row["status"] == "running" and (row["lease_until"] or "") >= now:
            raise ConflictError(f"run {run_id} is being processed (lease until {row['lease_until']})", run_id=run_id)
        limit = max(row["lim"], row["attempts"] + 1)
        q.requeue_run(conn, run_id, limit)
        store.append_event(conn, at=now, kind="extraction.retry_requested", actor=actor,
                           payload={"run_id": run_id, "previous_status": row["status"], "attempt_limit": limit})
    return {"run_id": run_id, "status": "queued", "attempt_limit": limit}


def _run_row(row) -> dict[str, Any]:
    out = dict(row)
    out["stages"] = loads(out.get("stages"), {})
    return out


def list_runs(store: Store, *, status: str | None = None, session_id: str | None = None, limit: int = 50, offset: int = 0) -> list[dict]:
    """Runs newest first, each with its session's principal and counts from its latest attempt."""
    return [_run_row(r) for r in q.run_page(store, status=status, session_id=session_id, limit=limit, offset=offset)]


def count_runs(store: Store, *, status: str | None = None, session_id: str | None = None) -> int:
    """How many runs :func:`list_runs` pages through with these filters."""
    return q.count_run_rows(store, status=status, session_id=session_id)


def count_waiting_after_failure(store: Store) -> int:
    """Queued runs whose last attempt failed (they wait for a worker or a person's Retry)."""
    with store.lock:
        return q.count_waiting_after_failure(store.conn)


@dataclass
class RunDetail:
    """One run end to end: the run row, every attempt, and one attempt's candidates."""

    run: dict[str, Any]
    attempts: list[dict[str, Any]]
    candidates: list[dict[str, Any]]
    shown_attempt: int | None = None
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.run["status"]

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "attempts": self.attempts, "candidates": self.candidates,
                "shown_attempt": self.shown_attempt, "events": self.events}

    def to_dataframe(self):
        """Candidates as a pandas DataFrame (one row each: content, evidence, verdict and reason, outcome, record)."""
        return display.frame(self)

    def _repr_html_(self) -> str:
        return display.html(self)


def get_run(store: Store, run_id: str, attempt: int | None = None) -> RunDetail:
    """A run with its attempts and the candidates of ``attempt`` (default: the latest that has any)."""
    with store.lock:
        conn = store.conn
        row = q.run_with_principal(conn, run_id)
        if row is None:
            raise NotFoundError(f"no extraction run {run_id}", run_id=run_id)
        attempts = [{**dict(a), "stages": loads(a["stages"], {}), "detail": loads(a["detail"], {})} for a in q.attempt_rows(conn, run_id)]
        if attempt is None:
            attempt = q.latest_candidate_attempt(conn, run_id)
        candidates = [
            {**dict(c), "candidate": loads(c["candidate"], {}), "review": loads(c["review"], {}), "detail": loads(c["detail"], {})}
            for c in q.candidate_rows(conn, run_id, attempt)
        ]
        events = [{**dict(e), "payload": loads(e["payload"], {})} for e in q.run_events(conn, run_id)]
    return RunDetail(_run_row(row), attempts, candidates, attempt, events)
