"""Write-log rows: one per write attempt, whether it wrote, reinforced or was refused.

Section 13 of the design asks that every write can be reconstructed from the log; a refusal
(no permission, unknown target, bad input, a policy refusal) is a write attempt too, so it gets a
row with ``outcome = 'refused'``, the error code, message and the stage that refused it.
"""

from __future__ import annotations

from typing import Any

from ..clock import format_ts
from ..inputs import loggable
from ..store.db import dumps
from ..store.write_queries import append_write_log, insert_write_log

MAX_LOGGED_TEXT = 4000  # a refused oversized input is logged cut, never whole
MAX_LOGGED_DEPTH = 20  # and a refused deeply nested one cut at this depth


def candidate_of(req) -> dict[str, Any]:
    """The logged form of a WriteRequest."""
    out = {
        "type": req.type, "content": req.content, "attribute": req.attribute, "scope": req.scope.key,
        "source_kind": req.source_kind, "about": req.about, "mentions": req.mentions, "evidence": req.evidence,
        "tags": req.tags, "event_at": format_ts(req.event_at), "valid_from": format_ts(req.valid_from),
        "valid_until": format_ts(req.valid_until), "review_at": format_ts(req.review_at),
    }
    if req.procedure is not None:
        out["procedure"] = req.procedure
    return out


def insert_log_row(conn, *, at: str, operation: str, agent_id: str | None, user_id: str | None, session_id: str | None,
                   actor: str, outcome: str, record_id: str | None, status: str | None, source_kind: str | None,
                   candidate: dict, validation: dict, stages: dict, total_ms: float, seq_needed: bool = True) -> int | None:
    """Append one write-log row; returns its seq (None with ``seq_needed=False``, which lets the
    PostgreSQL store send the insert with the transaction's COMMIT instead of on its own).

    Every text is stored in its :func:`~memory_core.inputs.loggable` form: a write refused for
    holding a lone surrogate still leaves its row (with the character escaped).
    """
    texts = loggable([operation, agent_id, user_id, session_id, actor, record_id, candidate, validation])
    operation, agent_id, user_id, session_id, actor, record_id, candidate, validation = texts
    values = (at, operation, agent_id, user_id, session_id, actor, outcome, record_id, status, source_kind,
              dumps(candidate), dumps(validation), dumps(stages), total_ms)
    if not seq_needed:
        append_write_log(conn, values)
        return None
    return insert_write_log(conn, values)


def clip(value: Any, _depth: int = 0) -> Any:
    """Cut long strings, long lists and deep nesting (recursively) so a refused oversized input
    does not bloat the log, and a refused deeply nested one can still be logged."""
    if isinstance(value, str):
        return value if len(value) <= MAX_LOGGED_TEXT else value[:MAX_LOGGED_TEXT] + f"... [{len(value)} characters]"
    if value is None or isinstance(value, (int, float, bool)):
        return value
    if _depth >= MAX_LOGGED_DEPTH:
        return f"[nested deeper than {MAX_LOGGED_DEPTH} levels: cut]"
    if isinstance(value, dict):
        return {str(k)[:200]: clip(v, _depth + 1) for k, v in list(value.items())[:50]}
    if isinstance(value, (list, tuple)):
        return [clip(v, _depth + 1) for v in list(value)[:50]]
    return clip(_short_repr(value))


def _short_repr(value: Any) -> str:
    try:
        return repr(value)[:MAX_LOGGED_TEXT]
    except (RecursionError, ValueError):  # a structure too deep to print
        return f"[{type(value).__name__} that cannot be printed]"


def refusal_validation(exc: Exception, stage: str | None) -> dict[str, Any]:
    """The validation column of a refused write: code, message, details and the refusing stage."""
    to_dict = getattr(exc, "to_dict", None)
    error = to_dict() if callable(to_dict) else {"code": "internal_error", "message": type(exc).__name__}
    return {"refused": {"code": error.get("code"), "message": error.get("message"), "details": clip(error.get("details")),
                        "stage": stage}}
