"""The extraction page's logic: ended sessions, runs and their candidates, trigger and retry.

Reading and running go through the service (``ended_sessions``, ``extraction_runs``,
``extraction_run``, ``enqueue_extraction``, ``run_extraction``, ``retry_extraction``,
``extract_transcript``). An uploaded transcript becomes an ordinary ended session before it is
extracted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memory_core.errors import InvalidInputError

from ..auth.accounts import Identity
from .actions import require
from .pagination import Page, page_bounds

ROLES = ("user", "assistant", "tool", "system")


def ended_sessions(service, agent_id: str | None = None, user_id: str | None = None, page: int = 1,
                   page_size: int = 50) -> Page:
    """Ended sessions, newest first, each with its latest extraction run."""
    return Page.of(service.ended_sessions(agent_id, user_id, page=page, page_size=page_size))


def runs(service, status: str | None = None, session_id: str | None = None, page: int = 1, page_size: int = 50) -> Page:
    """One page of runs, newest first, with the principal and candidate counts (``service.extraction_runs``)."""
    total = service.count_extraction_runs(status=status, session_id=session_id)
    page, offset = page_bounds(page, page_size, total)
    rows = service.extraction_runs(status=status, session_id=session_id, limit=page_size, offset=offset)
    keep = ("id", "session_id", "agent_id", "user_id", "status", "trigger", "attempts", "candidates", "written",
            "created_at", "finished_at", "error")
    return Page([{k: r.get(k) for k in keep} for r in rows], total, page, page_size)


def run_detail(service, run_id: str, attempt: int | None = None):
    """A ``RunDetail``: the run, every attempt, one attempt's candidates, its events."""
    return service.extraction_run(run_id, attempt)


def _validator_note(candidate: dict[str, Any]) -> str | None:
    detail = candidate.get("detail") or {}
    write = detail.get("write") or {}
    for key in ("reason", "error", "message"):
        if detail.get(key):
            return str(detail[key])
    if write:
        notes = write.get("notes") or []
        extra = "; ".join(str(n) for n in notes) if notes else ""
        return f"{write.get('outcome', '')}{' as ' + write['status'] if write.get('status') else ''}{': ' + extra if extra else ''}"
    return None


def candidate_rows(detail) -> list[dict[str, Any]]:
    """Each candidate of the shown attempt: content and evidence, the reviewer's verdict, the validator's outcome."""
    out = []
    for c in detail.candidates:
        cand = c.get("candidate") or {}
        review = c.get("review") or {}
        out.append({
            "#": c.get("idx"), "kind": cand.get("kind"), "type": cand.get("type"),
            "content": cand.get("content") if not cand.get("redacted") else "(erased: the record was forgotten)",
            "evidence": cand.get("evidence"), "turn": cand.get("evidence_turn"), "source": cand.get("source_kind"),
            "verdict": c.get("verdict"), "reviewer's reason": review.get("reason"),
            "outcome": c.get("outcome"), "validator": _validator_note(c), "record_id": c.get("record_id"),
        })
    return out


def attempt_rows(detail) -> list[dict[str, Any]]:
    """One row per attempt of a run: outcome, worker, times, error, the models used."""
    return [{"attempt": a.get("attempt"), "outcome": a.get("outcome"), "worker": a.get("worker_id"),
             "started_at": a.get("started_at"), "finished_at": a.get("finished_at"), "error": a.get("error"),
             "extractor": a.get("extractor"), "reviewer": a.get("reviewer")} for a in detail.attempts]


# -- running ---------------------------------------------------------------------------------


def trigger(service, identity: Identity, session_id: str, progress=None):
    """Queue a run for an ended session and process it now; returns its ``RunDetail``."""
    require(identity, "extract")
    run_id = service.enqueue_extraction(session_id, actor=identity.actor, trigger="manual")
    if progress:
        progress(f"queued run {run_id} for session {session_id}")
    return _process(service, run_id, progress)


def _process(service, run_id: str, progress=None):
    if progress:
        progress(f"extracting, reviewing and validating candidates (run {run_id})…")
    detail = service.run_extraction(run_id)
    if detail is None:  # another worker holds it; show where it stands
        detail = service.extraction_run(run_id)
    if progress:
        for attempt in detail.attempts[-1:]:
            for stage, ms in (attempt.get("stages") or {}).items():
                progress(f"{stage}: {float(ms):.1f} ms")
        progress(f"run {run_id} is {detail.status}")
    return detail


def can_retry(run: dict[str, Any]) -> bool:
    """A failed run, or a queued one whose last attempt failed (it waits for its next attempt)."""
    return run.get("status") == "failed" or (run.get("status") == "queued" and bool(run.get("error")))


def retry(service, identity: Identity, run_id: str, progress=None):
    """Requeue a failed or waiting run (one more attempt if its attempts are spent) and process it now."""
    require(identity, "extract")
    service.retry_extraction(run_id, actor=identity.actor, run_now=False)
    if progress:
        progress(f"requeued run {run_id}")
    return _process(service, run_id, progress)


# -- uploaded transcripts ------------------------------------------------------------------------


@dataclass
class UploadedTurn:
    role: str
    content: str
    at: str | None = None


_DAY_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DAY_AND_TIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?$")
# "[2026-03-02 09:15] user: text" or "user: text"; role names as people paste them.
_TEXT_TURN = re.compile(r"^\s*(?:\[(?P<at>[^\]]{4,40})\]\s*)?(?P<role>[A-Za-z]+)\s*:\s?(?P<content>.*)$")
ROLE_NAMES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "tool": "tool",
              "system": "system"}


def _text_turns(text: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        match = _TEXT_TURN.match(line)
        role = ROLE_NAMES.get(match["role"].lower()) if match else None
        if role is None:
            if not items:
                raise InvalidInputError(f"line {n} is not 'role: content' (roles: {', '.join(ROLES)})")
            items[-1]["content"] += "\n" + line  # a turn of several lines
            continue
        item = {"role": role, "content": match["content"].strip()}
        if match["at"]:
            item["at"] = match["at"].strip().replace(" ", "T", 1)
        items.append(item)
    for item in items:
        item["content"] = item["content"].strip()
    return items


def _json_items(text: str) -> list[Any] | None:
    """The turns of a JSON document or of JSON lines; None when it is neither (text lines that
    start with a bracket, such as "[2026-03-02 09:15] user: ...")."""
    try:
        parsed = json.loads(text)
        return parsed.get("turns", []) if isinstance(parsed, dict) else parsed
    except json.JSONDecodeError:
        pass
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError:
        return None


def parse_transcript(data: bytes, name: str = "") -> list[UploadedTurn]:
    """Turns from an uploaded file: a JSON list or ``{"turns": [...]}``, JSON lines, or text
    lines ``role: content``. Each turn needs a role (user, assistant, tool, system) and content."""
    text = data.decode("utf-8-sig")
    items: list[Any]
    stripped = text.strip()
    if not stripped:
        raise InvalidInputError("the transcript is empty")
    json_items = _json_items(stripped) if stripped[0] in "[{" and not name.endswith(".txt") else None
    if json_items is not None:
        items = json_items
    else:
        items = _text_turns(stripped)
    turns = []
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict) or item.get("role") not in ROLES or not isinstance(item.get("content"), str):
            raise InvalidInputError(f"turn {n} needs a role ({', '.join(ROLES)}) and text content")
        turns.append(UploadedTurn(item["role"], item["content"], item.get("at")))
    if not turns:
        raise InvalidInputError("the transcript has no turns")
    return turns


def _turn_dicts(turns: list[UploadedTurn]) -> list[dict[str, Any]]:
    return [{"role": t.role, "content": t.content, **({"at": t.at} if t.at else {})} for t in turns]


def reference_time(text: str | None) -> str | None:
    """The time the person says the conversation happened, as the core reads it: ISO, UTC; a day
    alone means noon (so the day stays the same in any time zone). None when the box is empty;
    the core refuses a time it cannot read or one in the future."""
    value = (text or "").strip()
    if not value:
        return None
    if _DAY_ONLY.match(value):
        return f"{value}T12:00:00Z"
    return value.replace(" ", "T", 1) if _DAY_AND_TIME.match(value) else value


def time_basis(service, turns: list[UploadedTurn], reference: str | None = None) -> str:
    """What these turns' relative dates will resolve against, in words (``service.transcript_time_basis``)."""
    return service.transcript_time_basis(_turn_dicts(turns), reference)


def failed_count(service) -> int:
    """How many extraction runs have failed (each shows its reason and a retry button)."""
    return service.count_extraction_runs(status="failed")


def extract_upload(service, identity: Identity, agent_id: str, user_id: str, turns: list[UploadedTurn],
                   project_id: str | None = None, progress=None, *, reference_time: str | None = None):
    """Record a pasted or uploaded transcript as an ended session of (agent, user) and extract it now;
    turns without their own time get ``reference_time`` (else the upload time)."""
    require(identity, "extract")
    queued = service.extract_transcript(
        agent_id=agent_id.strip(), user_id=user_id.strip(), project_id=project_id or None, actor=identity.actor,
        turns=_turn_dicts(turns), run_now=False, reference_time=reference_time,
    )
    if progress:
        progress(f"recorded {len(turns)} turns as session {queued.run['session_id']}; queued run {queued.run['id']}")
    return _process(service, queued.run["id"], progress)
