"""Writes and lifecycle of records: the half of the :class:`~memory_core.service.MemoryService`
facade that delegates to the write path (``ingest.writer``) and the lifecycle (``ingest.lifecycle``).

A mixin like :class:`~memory_core.service.admin_methods.AdminMethods`: a tool handler, the admin app
and hosts write, revise, confirm, forget and merge through these methods, which check nothing the
components below do not check themselves.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..clock import parse_ts
from ..ingest.lifecycle import Lifecycle
from ..ingest.writer import Ingestor, WriteOutcome, WriteRequest
from ..ingest.procedures import procedure_from_row
from ..policy.grants import ScopeAccess, access_from_grants
from ..policy.scopes import Scope, parse_scope, validate_id
from ..store.batching import fetch_together
from ..store.db import Store
from ..store.grant_queries import agent_grants_statement
from ..store.records import Record, record_by_id_statements, records_from
from ..store.write_queries import procedure_statement

if TYPE_CHECKING:
    from .session import Session


class RecordMethods:
    """Write, revise, confirm, forget and merge records, each through the component that owns it."""

    # Provided by MemoryService.
    ingestor: Ingestor
    lifecycle: Lifecycle
    store: Store

    def revise(self, session: "Session | None", record: Record, *, content: str, reason: str, actor: str,
               source_kind: str | None = None, evidence: str | None = None, valid_from: datetime | None = None,
               valid_until: datetime | None = None, review_at: datetime | None = None,
               attribute: str | None = None) -> WriteOutcome:
        """Write a new version of ``record``; without a session (a person editing in the admin app)
        the original evidence is kept, and the source kind too unless ``source_kind`` names the
        person's own (the admin app passes ``system`` for a reviewer's edit of an inference)."""
        if session is not None:
            access = session.access()
            agent_id, user_id, session_id = session.agent_id, session.user_id, session.id
        else:
            access = ScopeAccess("admin", "admin", writable={record.scope: f"reviewer {actor} editing"}, readable={record.scope: "reviewer"})
            agent_id, user_id, session_id = record.creator_agent_id or "admin", record.scope_id, None
        keep_source = session is None
        request = WriteRequest(
            type=record.type, content=content, scope=Scope(record.scope_kind, record.scope_id),
            source_kind=(source_kind or record.source_kind) if keep_source else (source_kind or "agent_inference"),
            agent_id=agent_id, user_id=user_id, actor=actor, attribute=attribute if attribute is not None else record.attribute,
            evidence=record.evidence if keep_source else evidence, session_id=session_id,
            tags=list(record.tags), event_at=parse_ts(record.event_at),
            valid_from=valid_from or parse_ts(record.valid_from), valid_until=valid_until or parse_ts(record.valid_until),
            review_at=review_at or (parse_ts(record.review_at) if not record.review_flagged_at else None),
            source_ref=record.source_ref, operation=f"memory_revise: {reason}", evidence_verified=keep_source,
            revises=record,
        )
        return self.ingestor.write(request, access)


    def write(self, request: WriteRequest, access: ScopeAccess) -> WriteOutcome:
        """Validate and write one record as ``access`` allows (path A; extraction uses it too)."""
        return self.ingestor.write(request, access)

    def write_system_fact(self, *, scope: str, content: str, attribute: str | None = None, about: str | None = None,
                          about_kind: str = "other", source_ref: str | None = None, actor: str = "host",
                          tags: list[str] | None = None, valid_from: datetime | None = None,
                          valid_until: datetime | None = None) -> WriteOutcome:
        """Host API: write a ``system`` fact (rank 3, confirmed) from an authoritative store.

        Never reachable through the model's tools. It runs the same write stages and is logged
        like any write (operation ``system_fact``); the host, not a grant, vouches for the scope.
        """
        target = parse_scope(scope)
        access = ScopeAccess("host", "host", writable={target.key: f"host system fact by {actor}"},
                             readable={target.key: "host"})
        request = WriteRequest(
            type="semantic", content=content, scope=target, source_kind="system", agent_id="host",
            user_id=target.id if target.kind == "user" else "host", actor=actor, attribute=attribute, about=about,
            about_kind=about_kind, tags=list(tags or []), valid_from=valid_from, valid_until=valid_until,
            source_ref=source_ref, operation="system_fact",
        )
        return self.ingestor.write(request, access)

    def log_refused_write(self, **attempt: Any) -> int:
        """Record a refused write attempt in the write log (``Ingestor.log_refusal``)."""
        return self.ingestor.log_refusal(**attempt)

    def record_for(self, agent_id: str, user_id: str, record_id: str) -> tuple[Record | None, ScopeAccess, dict | None]:
        """A record by id (any status; None if there is none), the principal's access and the
        record's procedure (None if it has none), read together: on PostgreSQL one round trip (the
        agent's grants, the record, its entity links and its procedure in one pipelined batch).
        No policy is applied here: the caller decides with the access, as with :meth:`record` and
        :meth:`access` read one after the other."""
        validate_id(agent_id, "agent_id")
        validate_id(user_id, "user_id")
        with self.store.lock:
            grants, rows, links, procedure = fetch_together(self.store.conn, [
                agent_grants_statement(agent_id), *record_by_id_statements(record_id),
                procedure_statement(record_id)])
        records = records_from(rows, links)
        return (records[0] if records else None, access_from_grants(agent_id, user_id, grants),
                procedure_from_row(procedure[0] if procedure else None))

    def procedure(self, record_id: str) -> dict | None:
        """Name, trigger, steps and pitfalls of a procedural record (None if it has none)."""
        return self.ingestor.procedure(record_id)

    def forget(self, record_id: str, **options: Any) -> list[str]:
        """Tombstone a record and its earlier versions and erase their text (``Lifecycle.forget``)."""
        return self.lifecycle.forget(record_id, **options)

    def forget_explained(self, record_id: str, **options: Any) -> dict:
        """Forget as :meth:`forget` does; returns the plan applied (``records`` with why each went,
        ``not_forgotten``, ...) and its ``lines``, as :meth:`forget_preview` shows them."""
        plan = self.lifecycle.erase(record_id, **options)
        return {**plan.to_dict(), "lines": plan.summary_lines()}

    def forget_preview(self, record_id: str) -> dict:
        """What forgetting ``record_id`` would erase, place by place, plus one line per place
        (``lines``) for a confirmation form. Nothing is written; no policy is applied."""
        plan = self.lifecycle.forget_preview(record_id)
        return {**plan.to_dict(), "lines": plan.summary_lines()}

    def confirm(self, record_id: str, **options: Any) -> Record:
        """Reinforce a live record, or promote it when a person confirms it (``Lifecycle.confirm``)."""
        return self.lifecycle.confirm(record_id, **options)

    def clear_review_flag(self, record_id: str, **options: Any) -> Record:
        """A reviewer's decision that a review-due flag needs no change (``Lifecycle.clear_review_flag``)."""
        return self.lifecycle.clear_review_flag(record_id, **options)

    def merge_preview(self, source_id: str, target_id: str) -> dict[str, Any]:
        """What merging one entity into another would change; nothing is written."""
        return self.lifecycle.merge_preview(source_id, target_id)

    def merge_entities(self, source_id: str, target_id: str, **options: Any) -> dict[str, Any]:
        """Merge two entities of one scope in one audited transaction (``Lifecycle.merge_entities``)."""
        return self.lifecycle.merge_entities(source_id, target_id, **options)
