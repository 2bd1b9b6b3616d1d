"""The stages of one write, each a function of the :class:`~memory_core.ingest.writer.WriteContext`.

They run in the order :mod:`memory_core.ingest.writer` lists them; the in-transaction ones use
``ctx.conn``. Every check that can refuse the write runs before anything is inserted.
"""

from __future__ import annotations

from datetime import timedelta

from ..clock import format_ts
from ..errors import ConflictError, InvalidInputError, PermissionDeniedError, PolicyError
from ..ids import new_id
from ..inputs import check_texts
from ..policy.rules import EVIDENCED_SOURCE_KINDS, INITIAL_CONFIDENCE, SOURCE_RANK, initial_status, may_supersede
from ..store.write_queries import turn_role
from ..store.records import LIVE_STATUSES, RECORD_TYPES, Record, fetch_record, fts_sync_new, insert_record, update_record
from .entity_resolution import ENTITY_KINDS, link, principal_entity, resolve_entity
from .evidence import ROLE_FOR_SOURCE, locate_quote
from .import_fields import apply_imported, finish_import
from .matching import (FactProbe, Match, classify_contradictions, fact_text, find_same_claim, find_same_fact, same_fact_read,
                       same_subject_records)
from .procedures import check_procedure, embedding_text, render, store_procedure
from .reinforcement import apply_reinforcement
from .write_types import WriteContext, WriteOutcome


# -- before the transaction ---------------------------------------------------------------------


def validate_input(ctx: "WriteContext") -> None:
    req, settings = ctx.req, ctx.ingestor.settings
    check_texts({"content": req.content, "evidence": req.evidence, "attribute": req.attribute, "about": req.about,
                 "mentions": req.mentions, "tags": req.tags})
    if req.type not in RECORD_TYPES:
        raise InvalidInputError(f"type must be one of {', '.join(RECORD_TYPES)}", field="type")
    if req.source_kind not in SOURCE_RANK:
        raise InvalidInputError(f"unknown source_kind {req.source_kind!r}", field="source_kind")
    if not isinstance(req.content, str) or not req.content.strip():
        raise InvalidInputError("content must not be empty", field="content")
    if len(req.content) > settings.max_content_chars:
        raise InvalidInputError(f"content is {len(req.content)} characters; the limit is {settings.max_content_chars}", field="content")
    if req.evidence is not None and len(req.evidence) > settings.max_evidence_chars:
        raise InvalidInputError(f"evidence is {len(req.evidence)} characters; the limit is {settings.max_evidence_chars}", field="evidence")
    if req.about_kind not in ENTITY_KINDS:
        raise InvalidInputError(f"about_kind must be one of {', '.join(ENTITY_KINDS)}", field="about_kind")
    if req.procedure is not None:
        if req.type != "procedural":
            raise InvalidInputError("only a procedural record has a procedure", field="procedure")
        req.procedure = check_procedure(req.procedure)
    ctx.attribute = ctx.ingestor.attribute_of(req)
    if req.type == "procedural" and not ctx.attribute:
        raise InvalidInputError("a procedural record needs a name (procedure.name or attribute)", field="attribute")
    if req.valid_from and req.valid_until and req.valid_until < req.valid_from:
        raise InvalidInputError("valid_until is before valid_from", field="valid_until")


def check_permission(ctx: "WriteContext") -> None:
    decision = ctx.access.can_write(ctx.req.scope)
    ctx.validation["permission"] = decision.reason
    if not decision:
        raise PermissionDeniedError(decision.reason, scope_kind=ctx.req.scope.kind)


def check_evidence(ctx: "WriteContext") -> None:
    req = ctx.req
    ctx.evidence_turn = req.evidence_turn if req.evidence_verified else None
    if req.source_kind in EVIDENCED_SOURCE_KINDS and not req.evidence_verified:
        reason, entailment = None, None
        if not req.evidence or not req.evidence.strip():
            reason = f"a {req.source_kind} claim needs an evidence quote"
        elif not req.session_id:
            reason = "there is no session transcript to find the quote in"
        else:
            role = ROLE_FOR_SOURCE[req.source_kind]
            location = locate_quote(ctx.ingestor.store.conn, req.session_id, req.evidence, role)
            if location is None:
                reason = f"the quote was not found in a {role} turn of this session's transcript"
            else:
                ctx.evidence_turn = location.turn
                entailment = ctx.ingestor.judge.judge(req.evidence, req.content)
                if not entailment.entailed:
                    reason = f"the quote does not entail the content: {entailment.reason}"
        if reason:
            ctx.source_kind, ctx.downgrade_reason = "agent_inference", reason
            ctx.notes.append(f"source_kind downgraded to agent_inference: {reason}")
        ctx.validation["evidence"] = {
            "requested": req.source_kind, "accepted": ctx.source_kind,
            "reason": reason or "quote found in the transcript and it entails the content",
            "turn": ctx.evidence_turn, "entailment": entailment.to_dict() if entailment else None,
        }
    elif req.evidence and req.session_id and not req.evidence_verified:
        conn = ctx.ingestor.store.conn  # prefer what the user or a tool said over the agent's own words
        location = (locate_quote(conn, req.session_id, req.evidence, "user") or locate_quote(conn, req.session_id, req.evidence, "tool")
                    or locate_quote(conn, req.session_id, req.evidence))
        ctx.evidence_turn = location.turn if location else None
    if ctx.evidence_turn is not None and req.session_id:
        ctx.evidence_role = turn_role(ctx.ingestor.store.conn, req.session_id, ctx.evidence_turn)
    if req.revises is not None:
        _check_revision(req.revises, ctx.source_kind, ctx.downgrade_reason)


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


def embed_content(ctx: "WriteContext") -> None:
    ctx.vector = ctx.ingestor.embedder.embed([embedding_text(ctx.req.content, ctx.req.procedure)])[0]


# -- inside the transaction ---------------------------------------------------------------------


def resolve_entities(ctx: "WriteContext") -> None:
    req, conn, now = ctx.req, ctx.conn, format_ts(ctx.now)
    # Only entities of the record's own scope are linked: exactly the agents that may read the
    # record may read them, whatever grants change later. Linking a shared record to a private
    # entity would show that entity's name and aliases (in memory_get, in search explanations and
    # through the FTS alias column) to readers who may not read the entity's scope. A name not
    # found there becomes a new entity in that scope (docs/store.md, "Entities and scopes").
    readable = [req.scope.key]
    subject_entity = None
    if req.revises is not None and not req.about:
        subject_entity = req.revises.subject_entity_id  # a new version keeps its record's subject
    elif req.about:
        match = resolve_entity(conn, name=req.about, kind=req.about_kind, readable=readable, writer_scope=req.scope, now=now, actor=req.actor)
        subject_entity, ctx.new_subject = match.entity_id, match.created
        ctx.notes.append(match.reason)
    elif req.type in ("semantic", "procedural"):
        if req.scope.kind == "user" and req.scope.id == req.user_id:
            match = principal_entity(conn, user_id=req.user_id, now=now, actor=req.actor)
            subject_entity, ctx.new_subject = match.entity_id, match.created
            if match.created:
                ctx.notes.append(match.reason)
        else:
            raise InvalidInputError(f"a {req.type} record outside the user's personal scope needs an 'about' entity", field="about")
    for name in req.mentions:
        if not name or not name.strip():
            continue
        match = resolve_entity(conn, name=name, kind="other", readable=readable, writer_scope=req.scope, now=now, actor=req.actor)
        if match.entity_id != subject_entity and match.entity_id not in ctx.mentions:
            ctx.mentions.append(match.entity_id)
            if match.created:
                ctx.notes.append(match.reason)
    ctx.subject_entity = subject_entity
    ctx.subject = f"{subject_entity}:{ctx.attribute}" if subject_entity and ctx.attribute and req.type != "episodic" else None
    if req.revises is not None:
        ctx.subject, ctx.subject_entity = req.revises.subject, req.revises.subject_entity_id
        ctx.new_subject = False
        if req.attribute is None:
            ctx.attribute = req.revises.attribute


def start_same_fact_read(ctx: "WriteContext") -> None:
    """Start the duplicate search's same-fact read (:func:`find_duplicate`) as the transaction opens:
    it depends only on the request, so on PostgreSQL it travels with the transaction's first
    statement, under its locks, instead of costing a round trip of its own. Nothing the write does
    before reading it changes a record."""
    req = ctx.req
    if req.revises is None and req.dedupe:
        ctx.same_fact_read = same_fact_read(ctx.conn, _same_fact_probe(ctx))


def _same_fact_probe(ctx: "WriteContext") -> FactProbe:
    req = ctx.req
    return FactProbe(req.scope.key, fact_text(_claim_text(req)), req.source_ref or req.session_id, ctx.evidence_turn)


def find_duplicate(ctx: "WriteContext") -> None:
    req, ing = ctx.req, ctx.ingestor
    ing.index.refresh()
    ctx.match = Match()
    if req.revises is not None or not req.dedupe:
        return
    # a subject entity this write created has no records yet: nothing to read
    ctx.live_on_subject, cosines = ([], None) if ctx.new_subject else same_subject_records(ctx.conn, req.scope, ctx.subject, ctx.vector)
    if req.imported is not None:
        ctx.live_on_subject = [r for r in ctx.live_on_subject if r.id not in req.imported.created]
    ctx.match = find_same_claim(ctx.conn, ing.index, content=_claim_text(req), record_type=req.type, scope=req.scope,
                                subject=ctx.subject, vector=ctx.vector, settings=ing.settings, live_on_subject=ctx.live_on_subject,
                                cosines=cosines)
    if req.imported is not None and ctx.match.reinforce is not None and ctx.match.reinforce.id in req.imported.created:
        ctx.match.reinforce = None
    ctx.notes.extend(ctx.match.notes())
    note = "states the same claim as {id}; reinforced it instead of writing a copy"
    if ctx.match.reinforce is None:
        # The same words from the same evidence, saved earlier under another subject (say by the
        # model's memory_write, now by session-end extraction): one fact, so one record.
        probe = _same_fact_probe(ctx)
        ctx.match.reinforce = find_same_fact(ctx.conn, probe, req.type, read=ctx.same_fact_read)
        if req.imported is not None and ctx.match.reinforce is not None and ctx.match.reinforce.id in req.imported.created:
            ctx.match.reinforce = None
        if ctx.match.reinforce is None:
            return
        where = f"session {probe.source_ref}" + (f" turn {ctx.evidence_turn}" if ctx.evidence_turn is not None else "")
        note = "states the same fact as {id} (the same words from the same evidence, " + where + "); reinforced it instead of writing a copy"
    record = ctx.match.reinforce
    evidence = {"evidence": req.evidence, "evidence_session_id": req.session_id, "evidence_turn": ctx.evidence_turn}
    updated, plan = apply_reinforcement(ctx.conn, ing.store, record, ing.observation_for(ctx), now=ctx.now, settings=ing.settings,
                                        actor=req.actor, reason=req.operation, evidence=evidence)
    ctx.notes.append(note.format(id=record.id))
    ctx.notes.extend(plan.notes)
    ctx.outcome = _outcome(ctx, "reinforced", updated)
    ctx.stopped = True


def _claim_text(req) -> str:
    return render(req.content, req.procedure)  # compared in the form it is stored


def check_contradictions(ctx: "WriteContext") -> None:
    if ctx.req.revises is not None:
        ctx.match.supersede, ctx.match.conflicts = [ctx.req.revises], []
        return
    if ctx.req.imported is not None and ctx.req.imported.fields.get("status") not in LIVE_STATUSES:
        return  # an imported superseded or expired version replaces and disputes nothing
    classify_contradictions(ctx.match, ctx.live_on_subject, ctx.source_kind)


def persist(ctx: "WriteContext") -> None:
    req, conn, ing, match = ctx.req, ctx.conn, ctx.ingestor, ctx.match
    now = format_ts(ctx.now)
    parent = match.supersede[0] if match.supersede else None
    record = _new_record(ctx, parent)
    # On PostgreSQL the insert, the procedure and the links are queued and travel with the read of
    # the record's full-text text, which gives its seq (one round trip for all of them).
    insert_record(conn, record, ctx.vector, queue=True)
    if req.procedure is not None:
        store_procedure(conn, record.id, req.procedure)
    if record.subject_entity_id:
        link(conn, record.id, record.subject_entity_id, "subject")
    for entity_id in ctx.mentions:
        link(conn, record.id, entity_id, "mention")
    fts_sync_new(conn, record)
    assert record.seq is not None
    ing.store.bump(conn, record.seq)
    superseded = []
    for old in match.supersede:
        update_record(conn, old.id, status="superseded", superseded_by_id=record.id, updated_at=now)
        ing.store.bump(conn, old.seq)
        superseded.append(old.id)
    for other in match.conflicts:
        existing = fetch_record(conn, other)
        if existing and record.id not in existing.conflicts_with:
            update_record(conn, other, conflicts_with=[*existing.conflicts_with, record.id], updated_at=now)
    if match.conflicts:
        # Supersession may not resolve it (the other side has the higher source rank): a person decides.
        # The ids are in conflicts_with; the reason stays free of them so it reads the same in every copy of a store.
        reason = (f"conflicts with {len(match.conflicts)} live record(s) of higher source rank on attribute "
                  f"{record.attribute!r}, which it may not supersede (see conflicts_with)")
        update_record(conn, record.id, review_flagged_at=now, review_reason=reason)
        record.review_flagged_at, record.review_reason = now, reason
        ctx.notes.append(f"conflicts with {', '.join(match.conflicts)}, which it may not supersede; flagged for review")
    if req.imported is not None:
        finish_import(conn, ing.store, req.imported, record)
    ctx.outcome = _outcome(ctx, "created", record, superseded=superseded, conflicts=list(match.conflicts))


def append_events(ctx: "WriteContext") -> None:
    result, req, store, now = ctx.outcome, ctx.req, ctx.ingestor.store, format_ts(ctx.now)
    record = result.record
    store.append_event(
        ctx.conn, at=now, kind="record.created", actor=req.actor, record_id=record.id, reason=req.operation,
        payload={"status": record.status, "source_kind": record.source_kind, "scope": record.scope,
                 "downgraded": bool(ctx.downgrade_reason), "superseded": result.superseded, "conflicts_with": result.conflicts_with},
    )
    for old in result.superseded:
        store.append_event(ctx.conn, at=now, kind="record.superseded", actor=req.actor, record_id=old,
                           reason=f"superseded by {record.id} on subject {record.subject}", payload={"by": record.id})
    if result.conflicts_with:
        store.append_event(ctx.conn, at=now, kind="record.conflict_flagged", actor=req.actor, record_id=record.id,
                           reason=record.review_reason, payload={"conflicts_with": result.conflicts_with})


# -- after commit -------------------------------------------------------------------------------


def update_index(ctx: "WriteContext") -> None:
    ctx.ingestor.index.refresh()


# -- helpers ------------------------------------------------------------------------------------


def _outcome(ctx: "WriteContext", outcome: str, record: Record, superseded=None, conflicts=None) -> WriteOutcome:
    return WriteOutcome(
        outcome=outcome, record=record, requested_source_kind=ctx.req.source_kind, downgraded=bool(ctx.downgrade_reason),
        downgrade_reason=ctx.downgrade_reason, superseded=list(superseded or []), conflicts_with=list(conflicts or []),
        notes=ctx.notes, flagged_for_review=bool(conflicts),
    )


def _new_record(ctx: "WriteContext", supersede: Record | None) -> Record:
    req, settings, embedder = ctx.req, ctx.ingestor.settings, ctx.ingestor.embedder
    now = format_ts(ctx.now)
    record_id = new_id("mem")
    status = initial_status(ctx.source_kind)
    expires = format_ts(ctx.now + timedelta(days=settings.provisional_ttl_days)) if status == "provisional" else None
    event_at = req.event_at or (ctx.now if req.type == "episodic" else None)
    record = Record(
        id=record_id, type=req.type,
        version=(supersede.version + 1) if supersede else 1,
        lineage_id=supersede.lineage_id if supersede else record_id,
        content=render(req.content, req.procedure), subject_entity_id=ctx.subject_entity, attribute=ctx.attribute, subject=ctx.subject,
        scope_kind=req.scope.kind, scope_id=req.scope.id, source_kind=ctx.source_kind,
        source_ref=req.source_ref or req.session_id, creator_agent_id=req.agent_id,
        evidence=req.evidence, evidence_session_id=req.session_id if req.evidence else None,
        evidence_turn=ctx.evidence_turn, created_at=now, updated_at=now, event_at=format_ts(event_at),
        expires_at=expires, valid_from=format_ts(req.valid_from), valid_until=format_ts(req.valid_until),
        review_at=format_ts(req.review_at), review_flagged_at=None, review_reason=None,
        confidence=INITIAL_CONFIDENCE[ctx.source_kind], status=status, observations=1,
        last_observed_session=req.session_id, supersedes_id=supersede.id if supersede else None,
        conflicts_with=list(ctx.match.conflicts), tags=list(dict.fromkeys(req.tags)),
        embed_model=embedder.model_name, embed_version=embedder.model_version,
    )
    return apply_imported(record, req.imported) if req.imported is not None else record
