"""Handlers for memory_write, memory_get, memory_revise and memory_forget."""

from __future__ import annotations

from typing import Any, Protocol

from ..clock import parse_ts
from ..errors import InvalidInputError, MemoryCoreError, NotFoundError, PermissionDeniedError
from ..ingest.writer import WriteRequest
from ..policy.grants import ScopeAccess
from ..policy.scopes import Scope
from ..settings import Settings
from ..store.records import Record, restrict_links
from .registry import ToolSession
from .schemas import MemoryForgetInput, MemoryGetInput, MemoryReviseInput, MemoryWriteInput


class Session(ToolSession, Protocol):
    """What a handler uses of the session it runs as (a :class:`memory_core.service.Session`);
    the service's public methods are reached through ``session.service``. The tools never import
    the service: it hands itself over, through the session, at call time."""

    service: Any

    def access(self) -> ScopeAccess: ...

    def resolve_target(self, label: str) -> Scope: ...

    def recent_context(self, turns: int, chars: int) -> str | None: ...


def _readable(session: Session, record_id: str) -> tuple[Record, ScopeAccess, dict | None]:
    """The record if this principal may read it, the principal's access and the record's procedure
    (read together: one round trip on PostgreSQL); the same not-found error for a record that does
    not exist, is forgotten or is not readable."""
    record, access, procedure = session.service.record_for(session.agent_id, session.user_id, record_id)
    if record is None or record.status == "deleted" or not access.can_read(record.scope):
        raise NotFoundError(f"no record {record_id} is visible to this agent", record_id=record_id)
    restrict_links([record], access.readable_keys)
    return record, access, procedure


def _writable_record(session: Session, record_id: str) -> Record:
    record, access, _ = _readable(session, record_id)
    decision = access.can_write(record.scope)
    if not decision:
        raise PermissionDeniedError(f"this agent may read but not change record {record_id}", record_id=record_id)
    return record


def _refused_by_write_path(exc: MemoryCoreError) -> dict:
    """The tool result of a write the write path refused: it wrote the refusal's log row already,
    so the refusal is returned as a result (the tool layer's refusal hook would log it again)."""
    return {"ok": False, "error": exc.to_dict()}


def write_limits(settings: Settings) -> dict[str, dict]:
    """JSON-schema bounds of memory_write and memory_revise from the settings the write path enforces."""
    write = settings.write
    return {"content": {"maxLength": write.max_content_chars}, "evidence": {"maxLength": write.max_evidence_chars}}


def memory_write(session: Session, args: MemoryWriteInput, *, origin: str | None = None) -> dict:
    scope = session.resolve_target(args.target)
    if args.procedure is not None and args.type != "procedural":
        raise InvalidInputError("procedure is only for type 'procedural'", field="procedure")
    request = WriteRequest(
        type=args.type, content=args.content, scope=scope, source_kind=args.source_kind,
        agent_id=session.agent_id, user_id=session.user_id, actor=f"agent:{session.agent_id}",
        attribute=args.attribute, about=args.about, about_kind=args.about_kind, mentions=list(args.mentions),
        evidence=args.evidence, session_id=session.id, tags=list(args.tags),
        event_at=parse_ts(args.event_at), valid_from=parse_ts(args.valid_from),
        valid_until=parse_ts(args.valid_until), review_at=parse_ts(args.review_at),
        procedure=args.procedure.model_dump() if args.procedure is not None else None,
    )
    access = session.access()
    try:
        outcome = session.service.write(request, access)
    except MemoryCoreError as exc:
        return _refused_by_write_path(exc)
    return outcome.to_tool_result()


def memory_get(session: Session, args: MemoryGetInput, *, origin: str | None = None) -> dict:
    record, _, procedure = _readable(session, args.record_id)
    public = record.to_public()
    if record.type == "procedural" and procedure is not None:
        public["procedure"] = procedure
    return {"ok": True, "record": public}


def memory_revise(session: Session, args: MemoryReviseInput, *, origin: str | None = None) -> dict:
    service = session.service
    actor = f"agent:{session.agent_id}"
    if args.action == "merge_entities":
        if not args.source_entity_id or not args.target_entity_id:
            raise InvalidInputError("merge_entities needs source_entity_id and target_entity_id", field="source_entity_id")
        access = session.access()
        for entity_id in (args.source_entity_id, args.target_entity_id):
            entity = service.entity(entity_id)
            if entity is None or not access.can_read(entity["scope"]):
                raise NotFoundError(f"no entity {entity_id} is visible to this agent", entity_id=entity_id)
            if not access.can_write(entity["scope"]):
                raise PermissionDeniedError(f"this agent may not change entity {entity_id}", entity_id=entity_id)
        preview = service.merge_entities(args.source_entity_id, args.target_entity_id, actor=actor, reason=args.reason)
        return {"ok": True, "merged": args.source_entity_id, "into": args.target_entity_id,
                "records_relinked": len(preview["relinked_records"]), "subjects_rewritten": len(preview["subject_changes"])}
    if not args.record_id:
        raise InvalidInputError(f"{args.action} needs record_id", field="record_id")
    record = _writable_record(session, args.record_id)
    if args.action == "confirm":
        updated = service.confirm(record.id, actor=actor, reason=args.reason, session_id=session.id,
                                  agent_id=session.agent_id, evidence=args.evidence)
        return {"ok": True, "record_id": updated.id, "status": updated.status, "confidence": updated.confidence,
                "observations": updated.observations, "expires_at": updated.expires_at}
    if not args.content:
        raise InvalidInputError("update needs the corrected content", field="content")
    try:
        outcome = service.revise(session, record, content=args.content, source_kind=args.source_kind, evidence=args.evidence,
                                 valid_from=parse_ts(args.valid_from), valid_until=parse_ts(args.valid_until),
                                 review_at=parse_ts(args.review_at), reason=args.reason, actor=actor)
    except MemoryCoreError as exc:
        return _refused_by_write_path(exc)
    return outcome.to_tool_result()


def memory_forget(session: Session, args: MemoryForgetInput, *, origin: str | None = None) -> dict:
    record = _writable_record(session, args.record_id)
    plan = session.service.forget_explained(record.id, actor=f"agent:{session.agent_id}", reason=args.reason)
    # Why each record went (another record stating the same fact goes with it), and the close
    # records that stay, so the model can tell the user exactly what was forgotten.
    return {"ok": True, "forgotten": [r["id"] for r in plan["records"]],
            "records": [{"id": r["id"], "why": r["why"]} for r in plan["records"]], "not_forgotten": plan["not_forgotten"]}


WRITE_TOOLS = ("memory_write", "memory_revise", "memory_forget")


def log_refused_write(session: Session, name, arguments, error) -> None:
    """Refusal hook of the write tools: a refused memory_write / memory_revise / memory_forget
    leaves a write-log row with its reason (the write path logs the refusals it raises itself)."""
    if name not in WRITE_TOOLS:
        return
    candidate = arguments if isinstance(arguments, dict) else {"raw_arguments": arguments}
    record_id = candidate.get("record_id") if isinstance(candidate.get("record_id"), str) else None
    session.service.log_refused_write(
        operation=name, agent_id=session.agent_id, user_id=session.user_id, session_id=session.id,
        actor=f"agent:{session.agent_id}", candidate=candidate, error=error, stage="tool_call", record_id=record_id,
    )

