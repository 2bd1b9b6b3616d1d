"""Notebook display of an extraction run (``RunDetail``): attempts, candidates with their
evidence, the reviewer's verdicts and reasons, the validator's outcomes, stage timings, events."""

from __future__ import annotations

from typing import Any

from . import markup as m
from .record_display import ERASED
from .safe import safe_html

CANDIDATE_COLUMNS = (
    "idx", "kind", "type", "content", "evidence", "evidence_turn", "source_kind", "verdict", "review_reason",
    "outcome", "validator", "record_id",
)


def validator_note(candidate: dict[str, Any]) -> str | None:
    """What the validator or write path said about a candidate, in one line."""
    detail = candidate.get("detail") or {}
    for key in ("reason", "summary"):
        if detail.get(key):
            return m.text(detail[key])
    if detail.get("write_error"):
        error = detail["write_error"]
        return f"write refused: {error.get('code')}: {error.get('message')}" if isinstance(error, dict) else m.text(error)
    if detail.get("duplicate_of") is not None:
        return f"duplicate of candidate {detail['duplicate_of']}"
    write = detail.get("write") or {}
    if write:
        notes = "; ".join(m.text(n) for n in write.get("notes") or [])
        status = f" as {write['status']}" if write.get("status") else ""
        return f"{write.get('outcome', '')}{status}" + (f": {notes}" if notes else "")
    return None


def candidate_row(candidate: dict[str, Any]) -> dict[str, Any]:
    """One candidate as a flat row (``CANDIDATE_COLUMNS``); erased text stays erased."""
    cand = candidate.get("candidate") or {}
    review = candidate.get("review") or {}
    redacted = bool(cand.get("redacted"))
    return {
        "idx": candidate.get("idx"), "kind": cand.get("kind", "fact"), "type": cand.get("type"),
        "content": ERASED if redacted else cand.get("content"), "evidence": None if redacted else cand.get("evidence"),
        "evidence_turn": cand.get("evidence_turn"), "source_kind": cand.get("source_kind"),
        "verdict": candidate.get("verdict"), "review_reason": None if review.get("redacted") else review.get("reason"),
        "outcome": candidate.get("outcome"), "validator": validator_note(candidate), "record_id": candidate.get("record_id"),
    }


def latest_stages(detail) -> dict[str, float]:
    """Milliseconds per stage of the latest attempt (what the extraction page charts)."""
    return dict((detail.attempts[-1].get("stages") if detail.attempts else None) or {})


@safe_html
def run_html(detail) -> str:
    """The run's header, a failure box if it failed, candidates, attempts, stage timings and events."""
    run = detail.run
    head = (f"extraction run {run['id']} · {run['status']} · session {run['session_id']} "
            f"({run.get('agent_id')} for {run.get('user_id')}) · attempts {run.get('attempts')} · trigger {run.get('trigger') or '-'}")
    parts = [m.heading(head)]
    if run.get("error"):
        parts.append(m.box(f"run {run['status']}", run["error"], kind="empty" if run["status"] == "failed" else "warn"))
    rows = [candidate_row(c) for c in detail.candidates]
    written = sum(r["outcome"] in ("created", "reinforced") for r in rows)
    caption = f"candidates of attempt {detail.shown_attempt}" if detail.shown_attempt else "candidates"
    parts += [m.para(f"{caption}: {len(rows)} proposed, {written} written", "ok" if rows else "muted"),
              m.table(rows, ["idx", "kind", "content", "evidence", "verdict", "review_reason", "outcome", "validator", "record_id"],
                      long=["content", "evidence", "review_reason", "validator"], empty="This run has no candidates (yet).")]
    attempts = [{k: a.get(k) for k in ("attempt", "outcome", "worker_id", "started_at", "finished_at", "extractor", "reviewer", "error")}
                for a in detail.attempts]
    parts.append(m.details(f"attempts ({len(attempts)})", m.table(attempts, long=["error"], empty="Not attempted yet.")))
    stages = [{"stage": k, "ms": v} for k, v in latest_stages(detail).items()]
    parts.append(m.details("stage timings (latest attempt)", m.table(stages, empty="No timings recorded.")))
    events = [{k: e.get(k) for k in ("seq", "at", "kind", "actor", "reason")} for e in detail.events]
    parts.append(m.details(f"events ({len(events)})", m.table(events, long=["reason"], empty="No events.")))
    return m.page(*parts)


def run_frame(detail):
    """One row per candidate of the shown attempt (``CANDIDATE_COLUMNS``)."""
    import pandas as pd

    return pd.DataFrame([candidate_row(c) for c in detail.candidates], columns=list(CANDIDATE_COLUMNS))
