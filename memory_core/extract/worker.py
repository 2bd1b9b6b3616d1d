"""The background worker (``agent-memory worker``): maintenance passes and extraction runs.

Each loop runs the expiry and due-review passes (and, when due, the log retention pass), then claims and processes runs until none is
claimable, then sleeps ``extraction.worker_poll_s``. Any number of workers (threads or
processes) may share a store: runs are leased and the passes are atomic. ``--once`` does one
loop and exits 0, or 1 if an attempt failed during it.
"""

from __future__ import annotations

import logging
import sys
import threading

from ..maintenance import run_maintenance
from .runner import ExtractionRunner, default_worker_id

log = logging.getLogger(__name__)


def run_once(runner: ExtractionRunner, worker_id: str, *, batch: int | None = None, out=None) -> tuple[int, int]:
    """One loop: maintenance, then runs until none is claimable; returns (runs processed, runs failed)."""
    deps = runner.deps
    batch = batch or deps.settings.maintenance_batch_size
    report = run_maintenance(deps.store, deps.index, deps.clock, batch, actor=f"worker:{worker_id}", housekeeping=deps.housekeeping)
    if out and (report.expired or report.review_flagged):
        print(f"maintenance: {len(report.expired)} expired, {len(report.review_flagged)} flagged for review", file=out, flush=True)
    if out and any(report.pruned.values()):
        print(f"log retention: deleted {report.pruned}", file=out, flush=True)
    processed = failed = 0
    while True:
        detail = runner.run_next(worker_id)
        if detail is None:
            return processed, failed
        processed += 1
        if detail.status != "succeeded":
            failed += 1
        if out:
            error = f" ({detail.run['error']})" if detail.run.get("error") else ""
            print(f"run {detail.run['id']} (session {detail.run['session_id']}): {detail.status}{error}", file=out, flush=True)


def run_worker(runner: ExtractionRunner, once: bool = False, worker_id: str | None = None, *, stop: threading.Event | None = None,
               out=sys.stderr) -> int:
    """Run the worker loop until ``stop`` is set or it is interrupted; returns a process exit code."""
    worker_id = worker_id or default_worker_id()
    stop = stop or threading.Event()
    poll = runner.settings.worker_poll_s
    if out:
        print(f"worker {worker_id} started on {runner.deps.store.path}", file=out, flush=True)
    try:
        while not stop.is_set():
            try:
                _, failed = run_once(runner, worker_id, out=out)
            except Exception:  # e.g. the database stayed locked; a long-running worker keeps going
                log.exception("worker %s: pass failed", worker_id)
                if once:
                    return 1
                failed = 1
            if once:
                return 1 if failed else 0
            stop.wait(poll)
    except KeyboardInterrupt:
        if out:
            print(f"worker {worker_id} stopped", file=out, flush=True)
    return 0
