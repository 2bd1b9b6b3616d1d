"""The library's spans: what each operation's span is called and which attributes it carries.

Every attribute is documented in docs/observability.md. Values are built from what the
operations already record (a search's stage traces, a write's outcome and stage timings, a
forget's erasure plan, an extraction attempt's log row): nothing is measured twice. The builders
read their inputs by attribute name (duck typing), since this layer sits below the components.

Never on a span unless ``telemetry.record_content`` is on: queries, memory content, evidence,
reasons, drop explanations, entity names, user ids (a keyed hash stands for them) and scope names
(their kind stands for them). Strings from the stages' recorded inputs and outputs are left out
altogether: only their numbers, flags and list lengths are copied.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections import Counter
from typing import Any

from .tracing import FAILED_STAGE, NO_SCOPE, NoScope, Scope, Telemetry

PROVIDER = "agent-memory"  # gen_ai.provider.name: the memory system
TOOL_NAMES = frozenset({"memory_search", "memory_get", "memory_write", "memory_revise", "memory_forget"})
_PROCESS_KEY = os.urandom(32)  # the user-hash key when telemetry.user_hash_key is unset


def user_hash(telemetry: Telemetry, user_id: str | None) -> str | None:
    """The keyed hash that stands for ``user_id`` on spans (16 hex digits), or None."""
    if not user_id:
        return None
    key = telemetry.user_hash_key or _PROCESS_KEY
    return hmac.new(key, user_id.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:16]


def store_id(location: str) -> str:
    """A short stable id for a store: a hash of its location, never the path or URL itself."""
    return hashlib.sha256(location.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _base(telemetry: Telemetry, operation: str, agent_id=None, user_id=None, session_id=None) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": operation,
        "gen_ai.provider.name": PROVIDER,
        "gen_ai.memory.store.id": telemetry.store_id,
        "gen_ai.agent.id": agent_id,
        "gen_ai.conversation.id": session_id,
        "agent_memory.user.hash": user_hash(telemetry, user_id),
    }


def _numbers(prefix: str, values: dict[str, Any]) -> dict[str, Any]:
    """Numbers and flags of a recorded input/output dict, and the length of each list or dict; never strings."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, bool | int | float):
            out[f"{prefix}.{key}"] = value
        elif isinstance(value, list | tuple | dict | set):
            out[f"{prefix}.{key}.count"] = len(value)
    return out


# -- search ---------------------------------------------------------------------------------------


def search(telemetry: Telemetry, ctx: Any) -> Scope | NoScope:
    """The span of one run of the search pipeline (``search_memory``); stages are its children."""
    def start() -> dict[str, Any]:
        req = ctx.request
        return {
            **_base(telemetry, "search_memory", req.agent_id, req.user_id, req.session_id),
            "agent_memory.search.id": ctx.search_id,
            "agent_memory.search.origin": req.origin,
            "agent_memory.search.limit": req.limit,
            "agent_memory.search.historical": req.historical,
            "agent_memory.search.types": list(req.types) if req.types else None,
            "agent_memory.search.entity_hints.count": len(req.entity_hints),
            "agent_memory.search.query.chars": len(req.query),
            "agent_memory.search.replay": req.replay_of is not None,
        }

    return telemetry.span("search_memory", start)


def search_done(scope: Scope | NoScope, ctx: Any) -> None:
    """Put a finished search's outcome on its span (and, with ``record_content``, its query and results)."""
    if scope.recording:
        scope.set(lambda: search_outcome(ctx))
        scope.set_content("gen_ai.memory.query.text", lambda: ctx.request.query)
        scope.set_content("gen_ai.memory.records", lambda: search_records(ctx))


def search_outcome(ctx: Any) -> dict[str, Any]:
    """What a finished search found: counts, the decisions taken, and the total time."""
    embedding = next((t.outputs for t in ctx.stages if t.name == "query_embedding"), {})
    out = {
        "gen_ai.memory.record.count": len(ctx.results),
        "agent_memory.search.candidates": len(ctx.pool),
        "agent_memory.search.dropped": len(ctx.dropped),
        "agent_memory.search.empty": not ctx.results,
        # written into the query_embedding trace by the stage that waited for the vector, after that stage's span ended
        "agent_memory.search.embedding_ms": embedding.get("embedding_ms"),
        "agent_memory.search.embedding_waited_ms": embedding.get("waited_ms"),
        "agent_memory.search.scopes.count": len(ctx.scopes),
        "agent_memory.search.scope_kinds": sorted({s.split(":", 1)[0] for s in ctx.scopes}) or None,
        "agent_memory.search.rewrite.status": ctx.rewrite_status.split(":", 1)[0],
        "agent_memory.search.rerank.status": (ctx.rerank_outcome or {}).get("status"),
        "agent_memory.search.gate.passed": (ctx.gate_summary or {}).get("passed"),
        "agent_memory.search.budget_used": ctx.budget_used,
        "agent_memory.search.total_ms": ctx.total_ms if ctx.total_ms is not None else ctx.elapsed_ms(),
    }
    return {k: v for k, v in out.items() if v is None or isinstance(v, bool | int | float | list) or _is_enum(v)}


def search_records(ctx: Any) -> str:
    """The results as ``gen_ai.memory.records`` JSON: id, text and score (only with ``record_content``)."""
    return json.dumps([{"id": c.record_id, "content": c.content, "score": c.score} for c in ctx.results], ensure_ascii=False)


def _is_enum(value: Any) -> bool:
    # the decisions' vocabularies are short lower-case words of our own; anything else is left out
    return isinstance(value, str) and len(value) <= 40 and value.replace("_", "").replace("-", "").isalpha() and value.islower()


def stage(parent: Scope | NoScope, name: str, ctx: Any) -> Scope | NoScope:
    """A child span of the search span for stage ``name``; its attributes come from the stage's trace."""
    if not parent.recording:
        return NO_SCOPE
    scope = parent.child(f"search_stage {name}", {"agent_memory.stage.name": name})
    already_halted = ctx.halted

    def recorded() -> dict[str, Any]:
        trace = ctx.stages[-1] if ctx.stages and ctx.stages[-1].name == name else None
        if trace is None:
            return {}
        ended_search = ctx.halted and not already_halted
        if ended_search:  # this stage found the answer empty: the rest are skipped (or always run)
            parent.set({"agent_memory.search.halted_at": name})
        return {
            "agent_memory.stage.ended_search": ended_search,
            "agent_memory.stage.status": trace.status,
            "agent_memory.stage.ms": trace.ms,
            "agent_memory.stage.dropped": len(trace.dropped),
            "agent_memory.stage.notes": len(trace.notes),
            **_numbers("agent_memory.stage.input", trace.inputs),
            **_numbers("agent_memory.stage.output", trace.outputs),
            "agent_memory.stage.ranking": len(ctx.ranking),
        }

    scope.on_exit(recorded)
    return scope


# -- writes and forgets ---------------------------------------------------------------------------


def write(telemetry: Telemetry, req: Any) -> Scope | NoScope:
    """The span of one write: ``update_memory`` for a revision, else ``upsert_memory`` (the write path
    decides whether a write creates a record or reinforces one)."""
    operation = "update_memory" if getattr(req, "revises", None) is not None else "upsert_memory"

    def start() -> dict[str, Any]:
        return {
            **_base(telemetry, operation, req.agent_id, req.user_id, req.session_id),
            "agent_memory.record.type": req.type,
            "agent_memory.record.source_kind": req.source_kind,
            "agent_memory.scope.kind": req.scope.kind,
            "agent_memory.write.revises": req.revises.id if getattr(req, "revises", None) is not None else None,
            "agent_memory.write.content.chars": len(req.content) if isinstance(req.content, str) else None,
            "agent_memory.write.has_evidence": bool(req.evidence),
        }

    return telemetry.span(operation, start)


def write_done(scope: Scope | NoScope, req: Any, outcome: Any) -> None:
    """Put a finished write's outcome on its span (and, with ``record_content``, its text and evidence)."""
    if scope.recording:
        scope.set(lambda: write_outcome(outcome))
        scope.set_content("gen_ai.memory.records", lambda: write_records(req))


def write_refused(scope: Scope | NoScope, error: BaseException, stage: str | None) -> None:
    """Mark a refused write's span with the error's code and the stage that refused it."""
    scope.fail(error, stage)


def stage_failed(scope: Scope | NoScope, stage: str | None) -> None:
    """Name the stage an unexpected exception left (the span's exit records the error itself)."""
    if isinstance(stage, str):
        scope.set({FAILED_STAGE: stage})


def write_outcome(outcome: Any) -> dict[str, Any]:
    """A finished write: what happened to which record, and each write stage's time."""
    record = outcome.record
    return {
        "gen_ai.memory.record.id": record.id,
        "gen_ai.memory.record.count": 1,
        "agent_memory.write.outcome": outcome.outcome,
        "agent_memory.record.status": record.status,
        "agent_memory.record.source_kind": record.source_kind,
        "agent_memory.write.downgraded": outcome.downgraded,
        "agent_memory.write.superseded.count": len(outcome.superseded),
        "agent_memory.write.conflicts.count": len(outcome.conflicts_with),
        "agent_memory.write.flagged_for_review": outcome.flagged_for_review,
        "agent_memory.write.total_ms": outcome.total_ms,
        **{f"agent_memory.write.stage.{name}.ms": ms for name, ms in outcome.stages.items()},
    }


def write_records(req: Any) -> str:
    """The written text and evidence as ``gen_ai.memory.records`` JSON (only with ``record_content``)."""
    record = {"content": req.content, "metadata": {"evidence": req.evidence} if req.evidence else {}}
    return json.dumps([record], ensure_ascii=False)


def forget(telemetry: Telemetry, record_id: str) -> Scope | NoScope:
    """The span of one forget (``delete_memory``) of ``record_id`` and what goes with it (the id is
    recorded once the record was found: an argument that names no record is not copied)."""
    return telemetry.span("delete_memory", lambda: _base(telemetry, "delete_memory"))


def forget_done(scope: Scope | NoScope, plan: Any) -> None:
    """Put what a forget erased on its span."""
    if scope.recording:
        scope.set(lambda: forget_outcome(plan))


def forget_outcome(plan: Any) -> dict[str, Any]:
    """How much one forget erased, place by place (counts only)."""
    places = ("turns", "entities", "candidates", "attempts", "runs", "search_log", "write_log", "events",
              "session_contexts", "host_memory")
    return {
        "gen_ai.memory.record.id": plan.requested,
        "gen_ai.memory.record.count": len(plan.records),
        "agent_memory.forget.kept_close.count": len(plan.not_forgotten),
        **{f"agent_memory.forget.erased.{place}": len(getattr(plan, place)) for place in places},
    }


# -- tool calls and extraction --------------------------------------------------------------------


def tool_call(telemetry: Telemetry, session: Any, name: Any, origin: str | None) -> Scope | NoScope:
    """The span of one tool call as a session (``execute_tool memory_search``, ...)."""
    tool = name if isinstance(name, str) and name in TOOL_NAMES else "other"

    def start() -> dict[str, Any]:
        return {
            **_base(telemetry, "execute_tool", session.agent_id, session.user_id, session.id),
            "gen_ai.tool.name": tool,
            "gen_ai.tool.type": "function",
            "agent_memory.tool.origin": origin,
        }

    return telemetry.span(f"execute_tool {tool}", start)


def tool_result(scope: Scope | NoScope, result: Any) -> None:
    """A tool's result on its span: ok, the error code of a refusal, and the record ids it names."""
    if not scope.recording or not isinstance(result, dict):
        return

    def values() -> dict[str, Any]:
        ok = result.get("ok") is not False
        out: dict[str, Any] = {"agent_memory.tool.ok": ok}
        error = result.get("error")
        if not ok and isinstance(error, dict) and isinstance(error.get("code"), str):
            out["error.type"] = error["code"]
        record = result.get("record")
        record_id = result.get("record_id") or (record.get("id") if isinstance(record, dict) else None)
        if isinstance(record_id, str):
            out["gen_ai.memory.record.id"] = record_id
        for key in ("results", "forgotten"):
            if isinstance(result.get(key), list):
                out["gen_ai.memory.record.count"] = len(result[key])
        return out

    scope.set(values)
    error = result.get("error")
    if result.get("ok") is False:
        code = error.get("code") if isinstance(error, dict) else None
        scope.error(code if isinstance(code, str) else "error")


def extraction(telemetry: Telemetry, held: Any) -> Scope | NoScope:
    """The span of one extraction attempt (``invoke_workflow memory_extraction``)."""
    return telemetry.span("invoke_workflow memory_extraction", lambda: {
        **_base(telemetry, "invoke_workflow", session_id=held.session_id),
        "gen_ai.workflow.name": "memory_extraction",
        "agent_memory.extraction.run_id": held.run_id,
        "agent_memory.extraction.attempt": held.attempt,
    })


def extraction_done(scope: Scope | NoScope, status: str, load_run: Any, attempt: int, telemetry: Telemetry) -> None:
    """Put an attempt's outcome on its span, read back from the attempt's log row (only when recording)."""
    if scope.recording:
        scope.set(lambda: extraction_outcome(status, load_run(), attempt, telemetry))
        if status != "succeeded":  # the run is queued for another attempt, failed for good, or taken over
            scope.error("lease_lost" if status == "lease_lost" else "extraction_attempt_failed")


def extraction_outcome(status: str, detail: Any, attempt: int, telemetry: Telemetry) -> dict[str, Any]:
    """What an attempt did, from its attempt-log row: status, stage times and candidates by outcome."""
    row = next((a for a in detail.attempts if a.get("attempt") == attempt), None) or {}
    run = detail.run
    outcomes = Counter(str(c.get("outcome")) for c in detail.candidates) if detail.shown_attempt == attempt else Counter()
    info = row.get("detail") or {}
    out: dict[str, Any] = {
        "gen_ai.agent.id": run.get("agent_id"),
        "agent_memory.user.hash": user_hash(telemetry, run.get("user_id")),
        "agent_memory.extraction.status": status,
        "agent_memory.extraction.trigger": run.get("trigger") if _is_enum(run.get("trigger")) else None,
        "agent_memory.extraction.candidates": sum(outcomes.values()),
        "agent_memory.extraction.failed_stage": info.get("failed_stage"),
        "agent_memory.extraction.retryable": info.get("retryable"),
        **{f"agent_memory.extraction.stage.{name}.ms": ms for name, ms in (row.get("stages") or {}).items()
           if isinstance(ms, int | float)},
        **{f"agent_memory.extraction.outcome.{name}": n for name, n in outcomes.items() if _is_enum(name)},
    }
    written = outcomes.get("created", 0) + outcomes.get("reinforced", 0)
    out["gen_ai.memory.record.count"] = written
    return out
