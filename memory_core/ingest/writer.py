"""Write path: every record enters the store through :meth:`Ingestor.write`.

Explicit tool writes (path A) and accepted extraction candidates (path B) use the same rules, in
this order: permission on the resolved scope; evidence (verbatim quote in the session transcript
and entailment, else a downgrade to ``agent_inference``); entity resolution; embedding;
duplicate search (reinforce instead of copying); contradiction on subject with the source-rank
supersession rule; status from source kind; one transaction for the record, its entity links,
FTS row, change-feed bump, events and write-log row; then the in-memory vector index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..clock import Clock, format_ts, parse_ts
from ..errors import ConflictError, InvalidInputError, PermissionDeniedError, PolicyError
from ..ids import new_id
from ..index.vector_index import VectorIndex
from ..policy.grants import ScopeAccess
from ..policy.rules import (
    EVIDENCED_SOURCE_KINDS,
    INITIAL_CONFIDENCE,
    SOURCE_RANK,
    initial_status,
    may_supersede,
    normalise_attribute,
    reinforced_confidence,
)
from ..policy.scopes import Scope
from ..settings import WriteSettings
from ..store.db import Store, dumps
from ..store.records import LIVE_STATUSES, RECORD_TYPES, Record, fetch_record, fetch_records, fts_sync, insert_record, update_record
from .entity_resolution import ENTITY_KINDS, link, principal_entity, resolve_entity
from .evidence import ROLE_FOR_SOURCE, Entailment, locate_quote
from .timing import StageTimer


@dataclass
class WriteRequest:
    """One record to write, with the principal it is written for."""

    type: str
    content: str
    scope: Scope
    source_kind: str
    agent_id: str
    user_id: str
    actor: str
    attribute: str | None = None
    about: str | None = None
    about_kind: str = "other"
    mentions: list[str] = field(default_factory=list)
    evidence: str | None = None
    session_id: str | None = None
    tags: list[str] = field(default_factory=list)
    event_at: datetime | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    review_at: datetime | None = None
    source_ref: str | None = None
    operation: str = "memory_write"
    evidence_verified: bool = False  # the caller (the extraction validator) already located the quote
    evidence_turn: int | None = None  # with evidence_verified: the turn the caller found the quote in
    dedupe: bool = True  # False for records that are never a duplicate of another (session summaries)
    revises: Record | None = None  # memory_revise: the live record this new version replaces


@dataclass
class WriteOutcome:
    outcome: str  # "created" | "reinforced"
    record: Record
    requested_source_kind: str
    downgraded: bool = False
    downgrade_reason: str | None = None
    superseded: list[str] = field(default_factory=list)
    conflicts_with: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stages: dict[str, float] = field(default_factory=dict)
    total_ms: float = 0.0

    def to_tool_result(self) -> dict[str, Any]:
        return {
            "ok": True,
            "record_id": self.record.id,
            "outcome": self.outcome,
            "status": self.record.status,
            "source_kind": self.record.source_kind,
            "downgraded": self.downgraded,
            "downgrade_reason": self.downgrade_reason,
            "superseded": self.superseded,
            "conflicts_with": self.conflicts_with,
            "notes": self.notes,
        }


class Ingestor:
    """Validates and writes records; the only code that inserts into ``records``."""

    def __init__(self, store: Store, index: VectorIndex, embedder, judge, settings: WriteSettings, clock: Clock) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.judge = judge
        self.settings = settings
        self.clock = clock

    # -- validation ---------------------------------------------------------------------------

    def _validate(self, req: WriteRequest) -> None:
        if req.type not in RECORD_TYPES:
            raise InvalidInputError(f"type must be one of {', '.join(RECORD_TYPES)}", field="type")
        if req.source_kind not in SOURCE_RANK:
            raise InvalidInputError(f"unknown source_kind {req.source_kind!r}", field="source_kind")
        if not req.content or not req.content.strip():
            raise InvalidInputError("content must not be empty", field="content")
        if len(req.content) > self.settings.max_content_chars:
            raise InvalidInputError(
                f"content is {len(req.content)} characters; the limit is {self.settings.max_content_chars}", field="content"
            )
        if req.evidence is not None and len(req.evidence) > self.settings.max_evidence_chars:
            raise InvalidInputError(
                f"evidence is {len(req.evidence)} characters; the limit is {self.settings.max_evidence_chars}", field="evidence"
            )
        if req.about_kind not in ENTITY_KINDS:
            raise InvalidInputError(f"about_kind must be one of {', '.join(ENTITY_KINDS)}", field="about_kind")
        if req.type == "procedural" and not normalise_attribute(req.attribute):
            raise InvalidInputError("a procedural record needs an attribute naming the procedure", field="attribute")
        if req.valid_from and req.valid_until and req.valid_until < req.valid_from:
            raise InvalidInputError("valid_until is before valid_from", field="valid_until")

    # -- the write ----------------------------------------------------------------------------

    def write(self, req: WriteRequest, access: ScopeAccess) -> WriteOutcome:
        """Write (or reinforce) one record; raises MemoryCoreError subclasses and writes nothing on error."""
        timer = StageTimer()
        self._validate(req)
        now_dt = self.clock.now()
        now = format_ts(now_dt)
        notes: list[str] = []
        validation: dict[str, Any] = {}

        with timer.stage("permission_check"):
            decision = access.can_write(req.scope)
            validation["permission"] = decision.reason
            if not decision:
                raise PermissionDeniedError(decision.reason, scope_kind=req.scope.kind)

        source_kind = req.source_kind
        downgrade_reason = None
        evidence_turn = req.evidence_turn if req.evidence_verified else None
        with timer.stage("evidence_validation"):
            if source_kind in EVIDENCED_SOURCE_KINDS and not req.evidence_verified:
                source_kind, downgrade_reason, evidence_turn, entailment = self._check_evidence(req)
                validation["evidence"] = {
                    "requested": req.source_kind,
                    "accepted": source_kind,
                    "reason": downgrade_reason or "quote found in the transcript and it entails the content",
                    "turn": evidence_turn,
                    "entailment": entailment.to_dict() if entailment else None,
                }
            elif req.evidence and req.session_id and not req.evidence_verified:
                location = locate_quote(self.store.conn, req.session_id, req.evidence)
                evidence_turn = location.turn if location else None
        if downgrade_reason:
            notes.append(f"source_kind downgraded to agent_inference: {downgrade_reason}")
        if req.revises is not None:
            self._check_revision(req.revises, source_kind, downgrade_reason)

        embed_text = req.content
        with timer.stage("content_embedding"):
            vector = self.embedder.embed([embed_text])[0]

        attribute = normalise_attribute(req.attribute)
        with self.store.transaction() as conn:
            with timer.stage("entity_link_resolution"):
                subject_entity, mention_entities, entity_notes = self._resolve_entities(conn, req, access, now)
                notes.extend(entity_notes)
            subject = f"{subject_entity}:{attribute}" if subject_entity and attribute and req.type != "episodic" else None

            with timer.stage("duplicate_search"):
                self.index.refresh()
                duplicate = None if (req.revises or not req.dedupe) else self._find_duplicate(req, vector)
            if duplicate is not None:
                record, reinforcement_notes = self._reinforce(conn, duplicate, req, source_kind, now_dt, evidence_turn)
                notes.extend(reinforcement_notes)
                outcome = "reinforced"
                superseded: list[str] = []
                conflicts: list[str] = []
            else:
                with timer.stage("contradiction_check"):
                    if req.revises is not None:
                        replaced, conflicts = [req.revises], []
                        subject = req.revises.subject
                        subject_entity = req.revises.subject_entity_id
                        attribute = req.revises.attribute if req.attribute is None else attribute
                    else:
                        replaced, conflicts = self._contradictions(conn, req.scope, subject, source_kind)
                supersede = replaced[0] if replaced else None
                record = self._new_record(req, source_kind, attribute, subject, subject_entity, now_dt, evidence_turn, supersede, conflicts)
                with timer.stage("sqlite_transaction"):
                    insert_record(conn, record, vector)
                    if record.subject_entity_id:
                        link(conn, record.id, record.subject_entity_id, "subject")
                    for entity_id in mention_entities:
                        link(conn, record.id, entity_id, "mention")
                    fts_sync(conn, record.seq)
                    self.store.bump(conn, record.seq)
                    superseded = []
                    for old in replaced:
                        update_record(conn, old.id, status="superseded", superseded_by_id=record.id, updated_at=now)
                        self.store.bump(conn, old.seq)
                        superseded.append(old.id)
                    for other in conflicts:
                        existing = fetch_record(conn, other)
                        if existing and record.id not in existing.conflicts_with:
                            update_record(conn, other, conflicts_with=[*existing.conflicts_with, record.id], updated_at=now)
                outcome = "created"
            with timer.stage("event_log_write"):
                self.store.append_event(
                    conn, at=now, kind=f"record.{outcome}", actor=req.actor, record_id=record.id,
                    reason=req.operation,
                    payload={"status": record.status, "source_kind": record.source_kind, "scope": record.scope,
                             "downgraded": bool(downgrade_reason), "superseded": superseded, "conflicts_with": conflicts},
                )
                for old in superseded:
                    self.store.append_event(
                        conn, at=now, kind="record.superseded", actor=req.actor, record_id=old,
                        reason=f"superseded by {record.id} on subject {subject}", payload={"by": record.id},
                    )
            result = WriteOutcome(
                outcome=outcome, record=record, requested_source_kind=req.source_kind,
                downgraded=bool(downgrade_reason), downgrade_reason=downgrade_reason,
                superseded=superseded, conflicts_with=conflicts, notes=notes,
            )
            log_seq = self._log(conn, req, result, validation, timer)
        with timer.stage("vector_index_update"):
            self.index.refresh()
        result.stages = dict(timer.stages)
        result.total_ms = timer.total_ms()
        with self.store.transaction() as conn:
            conn.execute("UPDATE write_log SET stages = ?, total_ms = ? WHERE seq = ?", (dumps(result.stages), result.total_ms, log_seq))
        return result

    # -- stages ---------------------------------------------------------------------------------

    @staticmethod
    def _check_revision(old: Record, source_kind: str, downgrade_reason: str | None) -> None:
        if old.status not in LIVE_STATUSES:
            raise ConflictError(f"record {old.id} is {old.status}; only live records can be revised", status=old.status)
        if old.type == "episodic":
            raise PolicyError("episodic records are never superseded; write a new episodic record instead", record_id=old.id)
        if not may_supersede(source_kind, old.source_kind):
            why = f" ({downgrade_reason})" if downgrade_reason else ""
            raise PolicyError(
                f"a {source_kind} revision{why} cannot replace a {old.source_kind} record: a record only supersedes "
                "records of equal or lower source rank",
                record_source_kind=old.source_kind, revision_source_kind=source_kind,
            )

    def _check_evidence(self, req: WriteRequest) -> tuple[str, str | None, int | None, Entailment | None]:
        if not req.evidence or not req.evidence.strip():
            return "agent_inference", f"a {req.source_kind} claim needs an evidence quote", None, None
        if not req.session_id:
            return "agent_inference", "there is no session transcript to find the quote in", None, None
        role = ROLE_FOR_SOURCE[req.source_kind]
        location = locate_quote(self.store.conn, req.session_id, req.evidence, role)
        if location is None:
            return "agent_inference", f"the quote was not found in a {role} turn of this session's transcript", None, None
        entailment = self.judge.judge(req.evidence, req.content)
        if not entailment.entailed:
            return "agent_inference", f"the quote does not entail the content: {entailment.reason}", location.turn, entailment
        return req.source_kind, None, location.turn, entailment

    def _resolve_entities(self, conn, req: WriteRequest, access: ScopeAccess, now: str) -> tuple[str | None, list[str], list[str]]:
        notes: list[str] = []
        readable = access.readable_keys
        subject_entity = None
        if req.revises is not None and not req.about:
            subject_entity = req.revises.subject_entity_id  # a new version keeps its record's subject
        elif req.about:
            match = resolve_entity(conn, name=req.about, kind=req.about_kind, readable=readable, writer_scope=req.scope, now=now, actor=req.actor)
            subject_entity = match.entity_id
            notes.append(match.reason)
        elif req.type in ("semantic", "procedural"):
            if req.scope.kind == "user" and req.scope.id == req.user_id:
                match = principal_entity(conn, user_id=req.user_id, now=now, actor=req.actor)
                subject_entity = match.entity_id
                if match.created:
                    notes.append(match.reason)
            else:
                raise InvalidInputError(
                    f"a {req.type} record outside the user's personal scope needs an 'about' entity", field="about"
                )
        mentions: list[str] = []
        for name in req.mentions:
            if not name or not name.strip():
                continue
            match = resolve_entity(conn, name=name, kind="other", readable=readable, writer_scope=req.scope, now=now, actor=req.actor)
            if match.entity_id != subject_entity and match.entity_id not in mentions:
                mentions.append(match.entity_id)
                if match.created:
                    notes.append(match.reason)
        return subject_entity, mentions, notes

    def _find_duplicate(self, req: WriteRequest, vector) -> Record | None:
        mask = self.index.mask([req.scope.key], LIVE_STATUSES, [req.type])
        hits = self.index.search(vector, 1, mask)
        if not hits or hits[0][1] < self.settings.duplicate_threshold:
            return None
        found = fetch_records(self.store.conn, "r.seq = ?", (hits[0][0],))
        return found[0] if found and found[0].status in LIVE_STATUSES else None

    def _reinforce(self, conn, record: Record, req: WriteRequest, source_kind: str, now_dt: datetime, evidence_turn: int | None) -> tuple[Record, list[str]]:
        now = format_ts(now_dt)
        notes = [f"near-duplicate of {record.id}; reinforced it instead of writing a copy"]
        independent = req.session_id is None or req.session_id != record.last_observed_session
        fields: dict[str, Any] = {"confidence": reinforced_confidence(record.confidence), "updated_at": now}
        observations = record.observations + (1 if independent else 0)
        fields["observations"] = observations
        if req.session_id:
            fields["last_observed_session"] = req.session_id
        if SOURCE_RANK[source_kind] > SOURCE_RANK[record.source_kind]:
            fields.update(source_kind=source_kind, evidence=req.evidence, evidence_session_id=req.session_id, evidence_turn=evidence_turn)
            notes.append(f"stronger source {source_kind} replaced {record.source_kind}")
        status = record.status
        if record.status == "provisional":
            if initial_status(fields.get("source_kind", record.source_kind)) == "confirmed" or observations >= self.settings.promote_after_observations:
                status = "confirmed"
                fields.update(status="confirmed", expires_at=None)
                notes.append("promoted from provisional to confirmed")
            else:
                extended = now_dt + timedelta(days=self.settings.reinforcement_extension_days)
                current = parse_ts(record.expires_at)
                if current is None or extended > current:
                    fields["expires_at"] = format_ts(extended)
        update_record(conn, record.id, **fields)
        self.store.bump(conn, record.seq)
        updated = fetch_record(conn, record.id)
        assert updated is not None
        if status != record.status:
            self.store.append_event(conn, at=now, kind="record.promoted", actor=req.actor, record_id=record.id, reason="reinforced by independent observation")
        return updated, notes

    def _contradictions(self, conn, scope: Scope, subject: str | None, source_kind: str) -> tuple[list[Record], list[str]]:
        """Live records on the same subject in the same scope: those this write supersedes (the
        lineage parent first: highest source rank, then most recent) and those it only conflicts with."""
        if subject is None:
            return [], []
        live = fetch_records(
            conn,
            # The unary + keeps SQLite on the subject index (the scope index is far less selective).
            "r.subject = ? AND +r.scope_kind = ? AND +r.scope_id = ? AND r.status IN ('provisional','confirmed') ORDER BY r.created_at DESC, r.seq DESC",
            (subject, scope.kind, scope.id),
            links=False,
        )
        replaced = [old for old in live if may_supersede(source_kind, old.source_kind)]
        replaced.sort(key=lambda old: SOURCE_RANK[old.source_kind], reverse=True)  # stable: recency kept within a rank
        conflicts = [old.id for old in live if not may_supersede(source_kind, old.source_kind)]
        return replaced, conflicts

    def _new_record(self, req, source_kind, attribute, subject, subject_entity, now_dt, evidence_turn, supersede, conflicts) -> Record:
        now = format_ts(now_dt)
        record_id = new_id("mem")
        status = initial_status(source_kind)
        expires = format_ts(now_dt + timedelta(days=self.settings.provisional_ttl_days)) if status == "provisional" else None
        event_at = req.event_at or (now_dt if req.type == "episodic" else None)
        return Record(
            id=record_id, type=req.type,
            version=(supersede.version + 1) if supersede else 1,
            lineage_id=supersede.lineage_id if supersede else record_id,
            content=req.content, subject_entity_id=subject_entity, attribute=attribute, subject=subject,
            scope_kind=req.scope.kind, scope_id=req.scope.id, source_kind=source_kind,
            source_ref=req.source_ref or req.session_id, creator_agent_id=req.agent_id,
            evidence=req.evidence, evidence_session_id=req.session_id if req.evidence else None,
            evidence_turn=evidence_turn, created_at=now, updated_at=now, event_at=format_ts(event_at),
            expires_at=expires, valid_from=format_ts(req.valid_from), valid_until=format_ts(req.valid_until),
            review_at=format_ts(req.review_at), review_flagged_at=None, review_reason=None,
            confidence=INITIAL_CONFIDENCE[source_kind], status=status, observations=1,
            last_observed_session=req.session_id, supersedes_id=supersede.id if supersede else None,
            conflicts_with=list(conflicts), tags=list(dict.fromkeys(req.tags)),
            embed_model=self.embedder.model_name, embed_version=self.embedder.model_version,
        )

    def _log(self, conn, req: WriteRequest, result: WriteOutcome, validation: dict, timer: StageTimer) -> int:
        candidate = {
            "type": req.type, "content": req.content, "attribute": req.attribute, "scope": req.scope.key,
            "source_kind": req.source_kind, "about": req.about, "mentions": req.mentions, "evidence": req.evidence,
            "tags": req.tags, "event_at": format_ts(req.event_at), "valid_from": format_ts(req.valid_from),
            "valid_until": format_ts(req.valid_until), "review_at": format_ts(req.review_at),
        }
        validation = {**validation, "outcome": result.outcome, "notes": result.notes, "superseded": result.superseded, "conflicts_with": result.conflicts_with}
        cur = conn.execute(
            "INSERT INTO write_log (at, operation, agent_id, user_id, session_id, actor, outcome, record_id, status, source_kind, candidate, validation, stages, total_ms) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (format_ts(self.clock.now()), req.operation, req.agent_id, req.user_id, req.session_id, req.actor, result.outcome,
             result.record.id, result.record.status, result.record.source_kind, dumps(candidate), dumps(validation),
             dumps(timer.stages), timer.total_ms()),
        )
        return int(cur.lastrowid)
