"""Named queries of session-end extraction (runs, attempts, candidates) and of host-issued memory
(its decisions and fitness results): ``extract/`` and ``hostmem/`` call these and hold no SQL.

A run's claim is one UPDATE that only matches a claimable run (:data:`CLAIMABLE`), and every later
write of an attempt checks the claim still holds, so two workers never hold the same run (see
``extract/runs.py``). Statements are in the SQLite dialect; the PostgreSQL backend translates them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from .paging import Where, count_rows, select_page

CLAIMABLE = (
    "((status = 'queued' AND (not_before IS NULL OR not_before <= :now)) OR (status = 'running' AND lease_until < :now))"
    " AND attempts < COALESCE(attempt_limit, :max_attempts)"
)


# -- sessions and transcripts -------------------------------------------------------------------------


def session_row(conn, session_id: str) -> sqlite3.Row | None:
    """The whole ``sessions`` row, or None."""
    return conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()


def live_summary_id(conn, session_id: str) -> str | None:
    """The id of a live session summary of this session, if there is one."""
    row = conn.execute("SELECT id FROM records WHERE source_kind = 'session_summary' AND source_ref = ? "
                       "AND status IN ('provisional','confirmed') LIMIT 1", (session_id,)).fetchone()
    return row[0] if row else None


def newest_user_turn(conn, session_id: str, content: str | None = None) -> int | None:
    """The number of the newest user turn of a session (holding exactly ``content`` when given)."""
    if content is not None:
        row = conn.execute("SELECT turn FROM turns WHERE session_id = ? AND role = 'user' AND content = ? ORDER BY turn DESC LIMIT 1",
                           (session_id, content)).fetchone()
    else:
        row = conn.execute("SELECT turn FROM turns WHERE session_id = ? AND role = 'user' ORDER BY turn DESC LIMIT 1",
                           (session_id,)).fetchone()
    return int(row[0]) if row is not None else None


# -- runs ---------------------------------------------------------------------------------------------


def insert_run(conn, run_id: str, session_id: str, now: str, trigger: str) -> None:
    """A new queued run."""
    conn.execute("INSERT INTO extraction_runs (id, session_id, status, created_at, trigger) VALUES (?,?, 'queued', ?, ?)",
                 (run_id, session_id, now, trigger))


def claim_run(conn, params: dict[str, Any], only_run: bool) -> sqlite3.Row | None:
    """Take the oldest claimable run (or ``params['run_id']`` with ``only_run``): ``id, session_id, attempts``, or None.
    ``params``: ``now, max_attempts, worker, lease, run_id``."""
    only = " AND id = :run_id" if only_run else ""
    return conn.execute(
        "UPDATE extraction_runs SET status = 'running', attempts = attempts + 1, claimed_by = :worker, "
        "lease_until = :lease, started_at = :now, not_before = NULL "
        f"WHERE id = (SELECT id FROM extraction_runs WHERE {CLAIMABLE}{only} ORDER BY created_at, id LIMIT 1) "
        f"AND {CLAIMABLE} RETURNING id, session_id, attempts",
        params,
    ).fetchone()


def abandon_running_attempts(conn, run_id: str, now: str, error: str | None = None) -> None:
    """Close a run's attempts still marked running as ``abandoned`` (with ``error`` when given)."""
    if error is None:
        conn.execute("UPDATE extraction_attempts SET outcome = 'abandoned', finished_at = ? WHERE run_id = ? AND outcome = 'running'",
                     (now, run_id))
    else:
        conn.execute("UPDATE extraction_attempts SET outcome = 'abandoned', finished_at = ?, error = ? "
                     "WHERE run_id = ? AND outcome = 'running'", (now, error, run_id))


def insert_attempt(conn, run_id: str, attempt: int, worker_id: str, now: str) -> None:
    """A new running attempt."""
    conn.execute("INSERT INTO extraction_attempts (run_id, attempt, worker_id, started_at, outcome) VALUES (?,?,?,?, 'running')",
                 (run_id, attempt, worker_id, now))


def fail_exhausted_runs(conn, now: str, max_attempts: int) -> list[str]:
    """Mark failed the running runs whose lease expired with no attempts left; their ids."""
    rows = conn.execute(
        "UPDATE extraction_runs SET status = 'failed', finished_at = ?, claimed_by = NULL, lease_until = NULL, "
        "error = COALESCE(error, 'the last attempt never finished') "
        "WHERE status = 'running' AND lease_until < ? AND attempts >= COALESCE(attempt_limit, ?) RETURNING id",
        (now, now, max_attempts),
    ).fetchall()
    return [row["id"] for row in rows]


def run_claim(conn, run_id: str) -> sqlite3.Row | None:
    """``status, claimed_by, attempts`` of a run."""
    return conn.execute("SELECT status, claimed_by, attempts FROM extraction_runs WHERE id = ?", (run_id,)).fetchone()


def extend_lease(conn, run_id: str, worker_id: str, attempt: int, lease: str) -> bool:
    """Extend a run's lease if this worker's attempt still holds it; whether it did."""
    cur = conn.execute("UPDATE extraction_runs SET lease_until = ? WHERE id = ? AND status = 'running' AND claimed_by = ? AND attempts = ?",
                       (lease, run_id, worker_id, attempt))
    return cur.rowcount == 1


def save_candidate(conn, values: Sequence[Any]) -> None:
    """One candidate of an attempt's log (``run_id, idx, attempt, candidate, verdict, review, outcome,
    record_id, detail``, JSON as text), replacing an earlier row of the same position."""
    conn.execute(
        "INSERT OR REPLACE INTO extraction_candidates (run_id, idx, attempt, candidate, verdict, review, outcome, record_id, detail) "
        "VALUES (?,?,?,?,?,?,?,?,?)", tuple(values))


def finish_attempt_row(conn, run_id: str, attempt: int, *, outcome: str, at: str, error: str | None, extractor: str | None,
                       reviewer: str | None, stages_json: str, detail_json: str) -> None:
    """Close an attempt with its outcome, error, components, stage times and detail."""
    conn.execute(
        "UPDATE extraction_attempts SET outcome = ?, finished_at = ?, error = ?, extractor = ?, reviewer = ?, stages = ?, detail = ? "
        "WHERE run_id = ? AND attempt = ?",
        (outcome, at, error, extractor, reviewer, stages_json, detail_json, run_id, attempt),
    )


def run_attempts(conn, run_id: str, max_attempts: int, *, with_lease: bool = False) -> sqlite3.Row | None:
    """``attempts`` and ``lim`` (the run's attempt limit, else ``max_attempts``) of a run, with
    ``status`` and ``lease_until`` when ``with_lease``."""
    extra = "status, lease_until, " if with_lease else ""
    return conn.execute(f"SELECT {extra}attempts, COALESCE(attempt_limit, ?) AS lim FROM extraction_runs WHERE id = ?",
                        (max_attempts, run_id)).fetchone()


def release_failed_run(conn, run_id: str, status: str, error: str, not_before: str | None, finished_at: str | None) -> None:
    """A failed attempt's run: back to ``queued`` (after ``not_before``) or ``failed``, unclaimed."""
    conn.execute(
        "UPDATE extraction_runs SET status = ?, error = ?, claimed_by = NULL, lease_until = NULL, not_before = ?, finished_at = ? WHERE id = ?",
        (status, error, not_before, finished_at, run_id),
    )


def requeue_run(conn, run_id: str, attempt_limit: int) -> None:
    """Make a run claimable now with this attempt limit."""
    conn.execute("UPDATE extraction_runs SET status = 'queued', not_before = NULL, attempt_limit = ?, finished_at = NULL, "
                 "claimed_by = NULL, lease_until = NULL WHERE id = ?", (attempt_limit, run_id))


def finish_run_succeeded(conn, run_id: str, *, now: str, extractor: str, reviewer: str, stages_json: str,
                         summary_record_id: str | None) -> None:
    """Close a run as succeeded, unclaimed, with its components, stage times and summary record."""
    conn.execute(
        "UPDATE extraction_runs SET status = 'succeeded', finished_at = ?, claimed_by = NULL, lease_until = NULL, error = NULL, "
        "extractor = ?, reviewer = ?, stages = ?, summary_record_id = ? WHERE id = ?",
        (now, extractor, reviewer, stages_json, summary_record_id, run_id),
    )


def count_waiting_after_failure(conn) -> int:
    """Queued runs whose last attempt failed."""
    row = conn.execute("SELECT COUNT(*) FROM extraction_runs WHERE status = 'queued' AND error IS NOT NULL").fetchone()
    return int(row[0] or 0) if row else 0


_RUN_LIST_COLUMNS = (
    "r.*, s.agent_id, s.user_id, "
    "(SELECT COUNT(*) FROM extraction_candidates c WHERE c.run_id = r.id AND c.attempt = r.attempts) AS candidates, "
    "(SELECT COUNT(*) FROM extraction_candidates c WHERE c.run_id = r.id AND c.attempt = r.attempts AND c.outcome IN ('created','reinforced')) AS written"
)


def run_page(store, *, status: str | None, session_id: str | None, limit: int, offset: int) -> list[sqlite3.Row]:
    """Runs newest first with their session's principal and their latest attempt's candidate and written counts."""
    where = Where().equal("r.status", status).equal("r.session_id", session_id)
    return select_page(store, _RUN_LIST_COLUMNS, "extraction_runs r JOIN sessions s ON s.id = r.session_id", where,
                       "r.created_at DESC, r.rowid DESC", limit, offset)


def count_run_rows(store, *, status: str | None, session_id: str | None) -> int:
    """How many runs :func:`run_page` pages through."""
    return count_rows(store, "extraction_runs r", Where().equal("r.status", status).equal("r.session_id", session_id))


def run_with_principal(conn, run_id: str) -> sqlite3.Row | None:
    """The run row with its session's ``agent_id`` and ``user_id``."""
    return conn.execute("SELECT r.*, s.agent_id, s.user_id FROM extraction_runs r JOIN sessions s ON s.id = r.session_id WHERE r.id = ?",
                        (run_id,)).fetchone()


def attempt_rows(conn, run_id: str) -> list[sqlite3.Row]:
    """Every attempt of a run, in order."""
    return conn.execute("SELECT * FROM extraction_attempts WHERE run_id = ? ORDER BY attempt", (run_id,)).fetchall()


def latest_candidate_attempt(conn, run_id: str) -> int | None:
    """The latest attempt of a run that logged candidates."""
    row = conn.execute("SELECT MAX(attempt) FROM extraction_candidates WHERE run_id = ?", (run_id,)).fetchone()
    return row[0] if row else None


def candidate_rows(conn, run_id: str, attempt: int | None) -> list[sqlite3.Row]:
    """The candidates one attempt logged, in order."""
    return conn.execute("SELECT * FROM extraction_candidates WHERE run_id = ? AND attempt = ? ORDER BY idx", (run_id, attempt)).fetchall()


def run_events(conn, run_id: str) -> list[sqlite3.Row]:
    """``seq, at, kind, actor, reason, payload`` of the extraction events naming a run."""
    return conn.execute(
        "SELECT seq, at, kind, actor, reason, payload FROM events WHERE kind LIKE 'extraction.%' AND json_extract(payload, '$.run_id') = ? "
        "ORDER BY seq", (run_id,)).fetchall()


# -- host-issued memory -------------------------------------------------------------------------------


def insert_host_decision(conn, row: dict[str, Any]) -> None:
    """One host-memory decision row (its columns are ``row``'s keys, our own names)."""
    conn.execute(f"INSERT INTO host_memory_decisions ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))


def host_decisions(conn, session_id: str) -> list[sqlite3.Row]:
    """A session's host-memory decisions in turn order."""
    return conn.execute("SELECT * FROM host_memory_decisions WHERE session_id = ? ORDER BY turn, at", (session_id,)).fetchall()


def insert_fitness_result(conn, values: Sequence[Any]) -> None:
    """One fitness result (``id, at, bundle_version, fingerprint, embed_model, embed_version, decider,
    settings, passed, metrics, cases, actor``, JSON as text)."""
    conn.execute(
        "INSERT INTO fitness_results (id, at, bundle_version, fingerprint, embed_model, embed_version, decider, settings,"
        " passed, metrics, cases, actor) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", tuple(values))


def latest_fitness_rows(conn, limit: int) -> list[sqlite3.Row]:
    """The latest fitness results, newest first."""
    return conn.execute("SELECT * FROM fitness_results ORDER BY at DESC, rowid DESC LIMIT ?", (limit,)).fetchall()


def passing_fitness(conn, fingerprint: str) -> sqlite3.Row | None:
    """``id, at`` of the newest passing fitness result for a fingerprint."""
    return conn.execute("SELECT id, at FROM fitness_results WHERE fingerprint = ? AND passed = 1 ORDER BY at DESC LIMIT 1",
                        (fingerprint,)).fetchone()
