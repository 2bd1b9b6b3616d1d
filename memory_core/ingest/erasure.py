"""What forgetting a record erases, and erasing it.

A memory is not only its ``records`` row. The same fact may have been saved twice (by the
model's ``memory_write`` and again by session-end extraction under another attribute): every live
record stating it from the same evidence goes too (``matching.states_same_fact``). The same words
live in the transcript turn it was quoted from, in a session summary that repeated that turn, in
extraction candidates and their review, in the logs (:mod:`.erasure_logs`), and in entity names
that only this memory introduced or named. The FTS index keeps its terms until its segments are
merged, and SQLite keeps old page images in the WAL until a checkpoint truncates it.

:func:`plan_erasure` finds all of it without writing (the admin app shows the plan before the
user confirms, :meth:`MemoryService.forget_preview`); :func:`apply_erasure` erases it inside the
caller's transaction. Matching is case-insensitive and whitespace-tolerant, on texts of at least
``MIN_NEEDLE_CHARS`` characters so a short word never wipes unrelated rows.
"""

from __future__ import annotations

import sqlite3

from ..text import normalise_alias, words as letter_digit_runs
from ..store import erasure_queries as queries
from ..store.db import loads
from ..store.lifecycle_queries import entity_aliases, entity_row
from ..store.records import Record, update_record
from .erasure_logs import apply_logs, plan_logs
from .erasure_plan import ErasurePlan
from .erasure_text import MARKER, contains_any, names_in, span_pattern
from .matching import FactProbe, fact_text, same_fact_records

MIN_NEEDLE_CHARS = 8
MIN_NAME_CHARS = 3
MAX_NAME_WORDS = 4  # an entity name found in the memory's text is at most this many words


def _needles_of(record: Record) -> list[str]:
    texts = [record.content, record.evidence or ""]
    return [t.strip() for t in texts if t and len(t.strip()) >= MIN_NEEDLE_CHARS]


def _lineage(conn: sqlite3.Connection, record: Record) -> list[Record]:
    """``record`` and the earlier versions of its lineage that are not yet tombstones, newest first."""
    return queries.lineage_records(conn, record.lineage_id, record.version)


def _evidence_of(record: Record) -> str:
    where = f"session {record.source_ref}"
    return where + (f" turn {record.evidence_turn}" if record.evidence_turn is not None else "")


def _add_lineage(plan: ErasurePlan, record: Record, targets: list[Record]) -> None:
    for target in targets:
        why = "the record asked to be forgotten" if target.id == record.id else "an earlier version of it"
        plan.records.append({"id": target.id, "version": target.version, "why": why})


def _add_same_facts(conn: sqlite3.Connection, plan: ErasurePlan, targets: list[Record]) -> None:
    """Every live record stating the same fact as one being forgotten (the same words from the same
    evidence, ``matching.states_same_fact``) is forgotten with it, with its earlier versions."""
    frontier = [t for t in targets if t.source_kind != "session_summary"]
    while frontier:
        target = frontier.pop()
        for other in same_fact_records(conn, FactProbe.of(target), exclude={t.id for t in targets}):
            for version in _lineage(conn, other):
                if version.id in {t.id for t in targets}:
                    continue
                why = (f"states the same fact as {target.id} (the same words from the same evidence, {_evidence_of(other)})"
                       if version.id == other.id else f"an earlier version of {other.id}")
                targets.append(version)
                frontier.append(version)
                plan.records.append({"id": version.id, "version": version.version, "why": why})


def _needles(conn: sqlite3.Connection, targets: list[Record]) -> list[str]:
    """The texts to find elsewhere: each target's content and evidence, and the candidate texts of
    the extraction runs that produced them (the reviewer may have narrowed the text, and extraction
    looked related records up with the original wording)."""
    needles = [needle for target in targets for needle in _needles_of(target)]
    for candidate in queries.candidate_jsons_of_records(conn, [t.id for t in targets]):
        cand = loads(candidate, {}) or {}
        for key in ("content", "evidence"):
            text = cand.get(key) if isinstance(cand, dict) else None
            if isinstance(text, str) and len(text.strip()) >= MIN_NEEDLE_CHARS:
                needles.append(text.strip())
    return list(dict.fromkeys(needles))


def _sessions_of(targets: list[Record]) -> set[str]:
    return {t.evidence_session_id or t.source_ref for t in targets if (t.evidence_session_id or t.source_ref)}


def _add_summaries(conn: sqlite3.Connection, plan: ErasurePlan, targets: list[Record], sessions: set[str],
                   needles: list[str]) -> list[str]:
    """Session summaries that quote the same turn or repeat the text are forgotten with it (their
    vectors and FTS rows would otherwise still answer "where does the user live"); returns their texts."""
    quoted_turns = {(t.evidence_session_id, t.evidence_turn) for t in targets if t.evidence_session_id and t.evidence_turn is not None}
    ids = {t.id for t in targets}
    texts: list[str] = []
    for summary in queries.session_summaries_of(conn, sorted(sessions)):
        if summary.id in ids:
            continue
        same_turn = (summary.evidence_session_id, summary.evidence_turn) in quoted_turns
        if same_turn or contains_any(summary.content, needles) or contains_any(summary.evidence, needles):
            targets.append(summary)
            ids.add(summary.id)
            plan.records.append({"id": summary.id, "version": summary.version,
                                 "why": "a session summary that quotes the same turn or repeats the text"})
            # Its content goes from the logs too; its own quote may be another turn's words,
            # which are not part of this memory, so it is not redacted from the transcript.
            texts.append(summary.content)
    return texts


def _note_related(conn: sqlite3.Connection, plan: ErasurePlan, targets: list[Record]) -> None:
    """Live records that stay but that a person may mean too: another fact quoted from the same turn,
    or the same words from other evidence (a separate observation). Listed, never erased."""
    ids = {t.id for t in targets}
    noted: dict[str, str] = {}
    for target in targets:
        if target.source_kind == "session_summary":
            continue
        if target.source_ref and target.evidence_turn is not None:
            for other in queries.live_records_quoting_turn(conn, target.source_ref, target.evidence_turn, target.scope_kind, target.scope_id):
                if other.id not in ids:
                    noted.setdefault(other.id, f"quotes the same turn ({_evidence_of(target)}) but states another fact")
        text = fact_text(target.content)
        words = letter_digit_runs(text)  # letters and digits only: LIKE needs no escapes
        if not words:
            continue
        for other in queries.live_records_containing(conn, target.scope_kind, target.scope_id, "%" + max(words, key=len) + "%"):
            if other.id not in ids and fact_text(other.content) == text:
                noted[other.id] = (f"says the same words from other evidence ({_evidence_of(other)}): a separate "
                                   "observation; forget it too to remove every copy")
    plan.not_forgotten = [{"id": k, "why": v} for k, v in noted.items()]


def _plan_turns(conn: sqlite3.Connection, plan: ErasurePlan, sessions: set[str]) -> None:
    """Transcript turns: the quoted spans (and verbatim copies of the content) become the marker."""
    patterns = [p for p in (span_pattern(n) for n in plan.needles) if p is not None]
    for row in queries.turns_of_sessions(conn, sorted(sessions)):
        spans = sum(len(p.findall(row["content"])) for p in patterns)
        if spans:
            plan.turns.append({"session_id": row["session_id"], "turn": row["turn"], "spans": spans})


def plan_erasure(conn: sqlite3.Connection, record: Record) -> ErasurePlan:
    """Find every place that holds ``record`` (its earlier versions, and every live record stating
    the same fact from the same evidence); writes nothing."""
    plan = ErasurePlan(requested=record.id)
    targets = _lineage(conn, record)
    _add_lineage(plan, record, targets)
    _add_same_facts(conn, plan, targets)
    plan.needles = _needles(conn, targets)
    sessions = _sessions_of(targets)
    summary_texts = _add_summaries(conn, plan, targets, sessions, plan.needles)
    _note_related(conn, plan, targets)
    _plan_turns(conn, plan, sessions)
    ids = [t.id for t in targets]
    _plan_entities(conn, plan, targets, ids)
    names = [n for e in plan.entities for n in [e["name"], *e["aliases"]] if len(n.strip()) >= MIN_NAME_CHARS]
    long_summaries = [t for t in summary_texts if len(t.strip()) >= MIN_NEEDLE_CHARS]
    plan.log_needles = list(dict.fromkeys([*plan.needles, *long_summaries, *names]))
    plan_logs(conn, plan, ids, names)
    return plan


def _plan_entities(conn: sqlite3.Connection, plan: ErasurePlan, targets: list[Record], ids: list[str]) -> None:
    # Entities no other record links to (created for this memory) lose their names and aliases;
    # so do entities no record links at all whose name the memory's text holds (a mention created
    # by a write that was then folded into an existing record).
    entity_ids = {link["entity_id"]: "introduced only by this memory" for t in targets for link in t.entity_links}
    entity_ids |= {t.subject_entity_id: "introduced only by this memory" for t in targets if t.subject_entity_id}
    for entity_id in _named_orphans(conn, targets):
        entity_ids.setdefault(entity_id, "named in this memory and linked to no record")
    for entity_id in sorted(entity_ids):
        if queries.entity_used_outside(conn, entity_id, ids):
            continue
        entity = entity_row(conn, entity_id)
        if entity is None:
            continue
        if entity["kind"] == "person" and entity["scope_kind"] == "user" and normalise_alias(entity["canonical_name"]) == normalise_alias(entity["scope_id"]):
            continue  # the user's own person entity: its name is the user id, not part of this memory
        plan.entities.append({"id": entity_id, "name": entity["canonical_name"], "aliases": entity_aliases(conn, entity_id),
                              "why": entity_ids[entity_id]})


def _phrases(texts: list[str]) -> list[str]:
    """Every normalised phrase of up to ``MAX_NAME_WORDS`` words of the texts, at least ``MIN_NAME_CHARS`` long."""
    phrases: set[str] = set()
    for text in texts:
        words = text.split()
        for size in range(1, MAX_NAME_WORDS + 1):
            for i in range(len(words) - size + 1):
                phrase = normalise_alias(" ".join(words[i:i + size]))
                if len(phrase) >= MIN_NAME_CHARS:
                    phrases.add(phrase)
    return sorted(phrases)


def _named_orphans(conn: sqlite3.Connection, targets: list[Record]) -> list[str]:
    """Entities of the targets' scopes with an alias the targets' text holds as a whole phrase
    (looked up by every phrase of up to ``MAX_NAME_WORDS`` words on the alias index)."""
    found: list[str] = []
    for target in targets:
        texts = [t for t in (target.content, target.evidence) if t]
        for row in queries.live_aliases_in_scope(conn, _phrases(texts), target.scope_kind, target.scope_id):
            if not queries.entity_is_linked(conn, row["entity_id"]) and any(names_in(t, [row["alias"]]) for t in texts):
                found.append(row["entity_id"])
    return found


def apply_erasure(conn: sqlite3.Connection, plan: ErasurePlan, *, now: str) -> None:
    """Erase everything ``plan`` lists, inside the caller's write transaction.

    Tombstones keep their id, type, version, lineage, scope, status and times; content, evidence,
    attribute, subject, tags, embedding and entity links go.
    """
    ids = plan.record_ids
    for record_id in ids:
        update_record(
            conn, record_id, content="", evidence=None, embedding=None, embed_dim=None, tags=[], attribute=None,
            subject=None, subject_entity_id=None, status="deleted", deleted_at=now, updated_at=now, review_reason=None,
        )
    queries.unlink_records(conn, ids)
    for entity in plan.entities:
        queries.delete_entity(conn, entity["id"])
    patterns = [p for p in (span_pattern(n) for n in plan.needles) if p is not None]
    for turn in plan.turns:
        text = queries.turn_content(conn, turn["session_id"], turn["turn"])
        for pattern in patterns:
            text = pattern.sub(MARKER, text)
        queries.set_turn_content(conn, turn["session_id"], turn["turn"], text)
    apply_logs(conn, plan)
