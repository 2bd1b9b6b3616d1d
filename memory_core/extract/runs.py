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
from ..store.db import Store, dumps, loads
from ..store.paging import Where, count_rows, select_page

RUN_STATUSES = ("queued", "running", "succeeded", "failed")
_CLAIMABLE = (
    "((status = 'queued' AND (not_before IS NULL OR not_before <= :now)) OR (status = 'running' AND lease_until < :now))"
    " AND attempts < COALESCE(attempt_limit, :max_attempts)"
)


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
    row = store.query_one("SELECT ended_at FROM sessions WHERE id = ?", (session_id,))
    if row is None:
        raise NotFoundError(f"no session {session_id}", session_id=session_id)
    if row["ended_at"] is None:
        raise ConflictError(f"session {session_id} has not ended; extraction runs on ended sessions", session_id=session_id)
    now = format_ts(clock.now())
    run_id = new_id("run")
    with store.transaction() as conn:
        conn.execute("INSERT INTO extraction_runs (id, session_id, status, created_at, trigger) VALUES (?,?, 'queued', ?, ?)",
                     (run_id, session_id, now, trigger))
        store.append_event(conn, at=now, kind="extraction.enqueued", actor=actor, payload={"run_id": run_id, "session_id": session_id, "trigger": trigger})
    return run_id


def claim(store: Store, clock: Clock, worker_id: str, *, lease_s: float, max_attempts: int, run_id: str | None = None) -> Claim | None:
    """Atomically take the oldest claimable run (or ``run_id``); None when there is nothing to take."""
    now_dt = clock.now()
    now = format_ts(now_dt)
    params = {"now": now, "max_attempts": max_attempts, "worker": worker_id,
              "lease": format_ts(now_dt + timedelta(seconds=lease_s)), "run_id": run_id}
    only = " AND id = :run_id" if run_id else ""
    with store.transaction() as conn:
        reap_exhausted(store, conn, now, max_attempts)
        row = conn.execute(
            "UPDATE extraction_runs SET status = 'running', attempts = attempts + 1, claimed_by = :worker, "
            "lease_until = :lease, started_at = :now, not_before = NULL "
            f"WHERE id = (SELECT id FROM extraction_runs WHERE {_CLAIMABLE}{only} ORDER BY created_at, id LIMIT 1) "
            f"AND {_CLAIMABLE} RETURNING id, session_id, attempts",
            params,
        ).fetchone()
        if row is None:
            return None
        conn.execute(
            "UPDATE extraction_attempts SET outcome = 'abandoned', finished_at = ?, error = 'the lease expired before the attempt finished' "
            "WHERE run_id = ? AND outcome = 'running'",
            (now, row["id"]),
        )
        conn.execute("INSERT INTO extraction_attempts (run_id, attempt, worker_id, started_at, outcome) VALUES (?,?,?,?, 'running')",
                     (row["id"], row["attempts"], worker_id, now))
        store.append_event(conn, at=now, kind="extraction.claimed", actor=f"worker:{worker_id}",
                           payload={"run_id": row["id"], "attempt": row["attempts"], "lease_until": params["lease"]})
    return Claim(row["id"], row["session_id"], int(row["attempts"]), worker_id)


def reap_exhausted(store: Store, conn, now: str, max_attempts: int) -> list[str]:
    """Mark as failed the running runs whose lease expired with no attempts left (inside a transaction)."""
    rows = conn.execute(
        "UPDATE extraction_runs SET status = 'failed', finished_at = ?, claimed_by = NULL, lease_until = NULL, "
        "error = COALESCE(error, 'the last attempt never finished') "
        "WHERE status = 'running' AND lease_until < ? AND attempts >= COALESCE(attempt_limit, ?) RETURNING id",
        (now, now, max_attempts),
    ).fetchall()
    for row in rows:
        conn.execute("UPDATE extraction_attempts SET outcome = 'abandoned', finished_at = ? WHERE run_id = ? AND outcome = 'running'", (now, row["id"]))
        store.append_event(conn, at=now, kind="extraction.failed", actor="maintenance", payload={"run_id": row["id"], "reason": "attempts exhausted"})
    return [row["id"] for row in rows]


def holds(conn, held: Claim) -> bool:
    """Whether ``held`` is still this run's current claim (call inside the transaction that acts on it)."""
    row = conn.execute("SELECT status, claimed_by, attempts FROM extraction_runs WHERE id = ?", (held.run_id,)).fetchone()
    return row is not None and row["status"] == "running" and row["claimed_by"] == held.worker_id and row["attempts"] == held.attempt


def renew(store: Store, clock: Clock, held: Claim, lease_s: float) -> None:
    """Extend the lease; raises LeaseLost when another worker has taken the run."""
    lease = format_ts(clock.now() + timedelta(seconds=lease_s))
    with store.transaction() as conn:
        cur = conn.execute(
            "UPDATE extraction_runs SET lease_until = ? WHERE id = ? AND status = 'running' AND claimed_by = ? AND attempts = ?",
            (lease, held.run_id, held.worker_id, held.attempt),
        )
        if cur.rowcount != 1:
            raise LeaseLost(f"run {held.run_id} attempt {held.attempt} is no longer held by {held.worker_id}")


def log_candidates(conn, held: Claim, rows: list[dict[str, Any]]) -> None:
    """Store one attempt's candidate log (inside the caller's transaction)."""
    for row in loggable(rows):  # outside text (model output, errors quoting it) must not fail the log
        conn.execute(
            "INSERT OR REPLACE INTO extraction_candidates (run_id, idx, attempt, candidate, verdict, review, outcome, record_id, detail) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            (held.run_id, row["idx"], held.attempt, dumps(row["candidate"]), row.get("verdict"), dumps(row.get("review") or {}),
             row.get("outcome"), row.get("record_id"), dumps(row.get("detail") or {})),
        )


def finish_attempt(conn, held: Claim, *, outcome: str, at: str, error: str | None, extractor: str | None,
                   reviewer: str | None, stages: dict, detail: dict) -> None:
    error, detail = loggable([error, detail])  # an error message may quote unstorable text
    conn.execute(
        "UPDATE extraction_attempts SET outcome = ?, finished_at = ?, error = ?, extractor = ?, reviewer = ?, stages = ?, detail = ? "
        "WHERE run_id = ? AND attempt = ?",
        (outcome, at, error, extractor, reviewer, dumps(stages), dumps(detail), held.run_id, held.attempt),
    )


def mark_failed_attempt(store: Store, conn, held: Claim, *, now_dt, error: str, backoff_s: float, max_attempts: int,
                        retryable: bool = True) -> tuple[str, str]:
    """Release a failed attempt: back to queued after the backoff, or failed when its attempts are
    spent or another attempt could not help (``retryable`` False). Returns (status, the run's error:
    ``error`` plus what happens next)."""
    now = format_ts(now_dt)
    row = conn.execute("SELECT attempts, COALESCE(attempt_limit, ?) AS lim FROM extraction_runs WHERE id = ?", (max_attempts, held.run_id)).fetchone()
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
    conn.execute(
        "UPDATE extraction_runs SET status = ?, error = ?, claimed_by = NULL, lease_until = NULL, not_before = ?, finished_at = ? WHERE id = ?",
        (status, error, format_ts(not_before) if status == "queued" else None,
         now if status == "failed" else None, held.run_id),
    )
    store.append_event(conn, at=now, kind="extraction.failed" if status == "failed" else "extraction.attempt_failed",
                       actor=f"worker:{held.worker_id}", reason=error,
                       payload={"run_id": held.run_id, "attempt": held.attempt, "status": status, "retryable": retryable})
    return status, error


def request_retry(store: Store, clock: Clock, run_id: str, *, actor: str, max_attempts: int) -> dict:
    """Make a queued-with-backoff or failed run claimable now, granting one more attempt if needed."""
    now = format_ts(clock.now())
    with store.transaction() as conn:
        row = conn.execute("SELECT status, attempts, COALESCE(attempt_limit, ?) AS lim, lease_until FROM extraction_runs WHERE id = ?",
                           (max_attempts, run_id)).fetchone()
        if row is None:
            raise NotFoundError(f"no extraction run {run_id}", run_id=run_id)
        if row["status"] == "succeeded":
            raise ConflictError(f"run {run_id} succeeded; queue a new run for its session instead", run_id=run_id)
        if row["status"] == "running" and (row["lease_until"] or "") >= now:
            raise ConflictError(f"run {run_id} is being processed (lease until {row['lease_until']})", run_id=run_id)
        limit = max(row["lim"], row["attempts"] + 1)
        conn.execute("UPDATE extraction_runs SET status = 'queued', not_before = NULL, attempt_limit = ?, finished_at = NULL, "
                     "claimed_by = NULL, lease_until = NULL WHERE id = ?", (limit, run_id))
        store.append_event(conn, at=now, kind="extraction.retry_requested", actor=actor,
                           payload={"run_id": run_id, "previous_status": row["status"], "attempt_limit": limit})
    return {"run_id": run_id, "status": "queued", "attempt_limit": limit}


def _run_row(row) -> dict[str, Any]:
    out = dict(row)
    out["stages"] = loads(out.get("stages"), {})
    return out


def list_runs(store: Store, *, status: str | None = None, session_id: str | None = None, limit: int = 50, offset: int = 0) -> list[dict]:
    """Runs newest first, each with its session's principal and counts from its latest attempt."""
    where = Where().equal("r.status", status).equal("r.session_id", session_id)
    columns = (
        "r.*, s.agent_id, s.user_id, "
        "(SELECT COUNT(*) FROM extraction_candidates c WHERE c.run_id = r.id AND c.attempt = r.attempts) AS candidates, "
        "(SELECT COUNT(*) FROM extraction_candidates c WHERE c.run_id = r.id AND c.attempt = r.attempts AND c.outcome IN ('created','reinforced')) AS written"
    )
    rows = select_page(store, columns, "extraction_runs r JOIN sessions s ON s.id = r.session_id", where,
                       "r.created_at DESC, r.rowid DESC", limit, offset)
    return [_run_row(r) for r in rows]


def count_runs(store: Store, *, status: str | None = None, session_id: str | None = None) -> int:
    """How many runs :func:`list_runs` pages through with these filters."""
    return count_rows(store, "extraction_runs r", Where().equal("r.status", status).equal("r.session_id", session_id))


def count_waiting_after_failure(store: Store) -> int:
    """Queued runs whose last attempt failed (they wait for a worker or a person's Retry)."""
    return store.scalar("SELECT COUNT(*) FROM extraction_runs WHERE status = 'queued' AND error IS NOT NULL") or 0


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
    row = store.query_one("SELECT r.*, s.agent_id, s.user_id FROM extraction_runs r JOIN sessions s ON s.id = r.session_id WHERE r.id = ?", (run_id,))
    if row is None:
        raise NotFoundError(f"no extraction run {run_id}", run_id=run_id)
    attempts = [{**dict(a), "stages": loads(a["stages"], {}), "detail": loads(a["detail"], {})}
                for a in store.query("SELECT * FROM extraction_attempts WHERE run_id = ? ORDER BY attempt", (run_id,))]
    if attempt is None:
        attempt = store.scalar("SELECT MAX(attempt) FROM extraction_candidates WHERE run_id = ?", (run_id,))
    candidates = [
        {**dict(c), "candidate": loads(c["candidate"], {}), "review": loads(c["review"], {}), "detail": loads(c["detail"], {})}
        for c in store.query("SELECT * FROM extraction_candidates WHERE run_id = ? AND attempt = ? ORDER BY idx", (run_id, attempt))
    ]
    events = [{**dict(e), "payload": loads(e["payload"], {})} for e in store.query(
        "SELECT seq, at, kind, actor, reason, payload FROM events WHERE kind LIKE 'extraction.%' AND json_extract(payload, '$.run_id') = ? ORDER BY seq",
        (run_id,))]
    return RunDetail(_run_row(row), attempts, candidates, attempt, events)
