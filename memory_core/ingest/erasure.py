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
from ..store.db import loads
from ..store.records import Record, fetch_records, update_record
from .erasure_logs import apply_logs, plan_logs
from .erasure_plan import ErasurePlan
from .erasure_text import MARKER, contains_any, marks_for, names_in, span_pattern
from .matching import FactProbe, fact_text, same_fact_records

MIN_NEEDLE_CHARS = 8
MIN_NAME_CHARS = 3
MAX_NAME_WORDS = 4  # an entity name found in the memory's text is at most this many words


def _needles_of(record: Record) -> list[str]:
    texts = [record.content, record.evidence or ""]
    return [t.strip() for t in texts if t and len(t.strip()) >= MIN_NEEDLE_CHARS]


def _lineage(conn: sqlite3.Connection, record: Record) -> list[Record]:
    """``record`` and the earlier versions of its lineage that are not yet tombstones, newest first."""
    return fetch_records(conn, "r.lineage_id = ? AND r.version <= ? AND r.status != 'deleted' ORDER BY r.version DESC",
                         (record.lineage_id, record.version))


def _evidence_of(record: Record) -> str:
    where = f"session {record.source_ref}"
    return where + (f" turn {record.evidence_turn}" if record.evidence_turn is not None else "")


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


def _note_related(conn: sqlite3.Connection, plan: ErasurePlan, targets: list[Record]) -> None:
    """Live records that stay but that a person may mean too: another fact quoted from the same turn,
    or the same words from other evidence (a separate observation). Listed, never erased."""
    ids = {t.id for t in targets}
    noted: dict[str, str] = {}
    for target in targets:
        if target.source_kind == "session_summary":
            continue
        if target.source_ref and target.evidence_turn is not None:
            for other in fetch_records(conn, "r.source_ref = ? AND r.evidence_turn = ? AND r.status IN ('provisional','confirmed') "
                                       "AND r.source_kind != 'session_summary' AND r.scope_kind = ? AND r.scope_id = ?",
                                       (target.source_ref, target.evidence_turn, target.scope_kind, target.scope_id), links=False):
                if other.id not in ids:
                    noted.setdefault(other.id, f"quotes the same turn ({_evidence_of(target)}) but states another fact")
        text = fact_text(target.content)
        words = letter_digit_runs(text)  # letters and digits only: LIKE needs no escapes
        if not words:
            continue
        like = "%" + max(words, key=len) + "%"
        for other in fetch_records(conn, "r.scope_kind = ? AND r.scope_id = ? AND r.status IN ('provisional','confirmed') "
                                   "AND r.source_kind != 'session_summary' AND r.content LIKE ?",
                                   (target.scope_kind, target.scope_id, like), links=False):
            if other.id not in ids and fact_text(other.content) == text:
                noted[other.id] = (f"says the same words from other evidence ({_evidence_of(other)}): a separate "
                                   "observation; forget it too to remove every copy")
    plan.not_forgotten = [{"id": k, "why": v} for k, v in noted.items()]


def plan_erasure(conn: sqlite3.Connection, record: Record) -> ErasurePlan:
    """Find every place that holds ``record`` (its earlier versions, and every live record stating
    the same fact from the same evidence); writes nothing."""
    plan = ErasurePlan(requested=record.id)
    targets = _lineage(conn, record)
    for target in targets:
        why = "the record asked to be forgotten" if target.id == record.id else "an earlier version of it"
        plan.records.append({"id": target.id, "version": target.version, "why": why})
    _add_same_facts(conn, plan, targets)
    needles: list[str] = []
    for target in targets:
        needles.extend(_needles_of(target))
    # Candidate texts of the extraction runs that produced these records (the reviewer may have
    # narrowed the text, and extraction looked related records up with the original wording).
    ids = [t.id for t in targets]
    marks = marks_for(ids)
    for row in conn.execute(f"SELECT candidate FROM extraction_candidates WHERE record_id IN ({marks})", ids):
        cand = loads(row["candidate"], {}) or {}
        for key in ("content", "evidence"):
            text = cand.get(key) if isinstance(cand, dict) else None
            if isinstance(text, str) and len(text.strip()) >= MIN_NEEDLE_CHARS:
                needles.append(text.strip())
    needles = list(dict.fromkeys(needles))

    # Session summaries that quote the same turn or repeat the text are forgotten with it: their
    # vectors and FTS rows would otherwise still answer "where does the user live".
    summary_texts: list[str] = []
    sessions = {t.evidence_session_id or t.source_ref for t in targets if (t.evidence_session_id or t.source_ref)}
    quoted_turns = {(t.evidence_session_id, t.evidence_turn) for t in targets if t.evidence_session_id and t.evidence_turn is not None}
    if sessions:
        smarks = ",".join("?" * len(sessions))
        summaries = fetch_records(
            conn,
            f"r.source_kind = 'session_summary' AND r.status != 'deleted' AND (r.source_ref IN ({smarks}) "
            f"OR r.evidence_session_id IN ({smarks}))",
            [*sessions, *sessions],
        )
        for summary in summaries:
            if summary.id in ids:
                continue
            same_turn = (summary.evidence_session_id, summary.evidence_turn) in quoted_turns
            if same_turn or contains_any(summary.content, needles) or contains_any(summary.evidence, needles):
                targets.append(summary)
                ids.append(summary.id)
                plan.records.append({"id": summary.id, "version": summary.version,
                                     "why": "a session summary that quotes the same turn or repeats the text"})
                # Its content goes from the logs too; its own quote may be another turn's words,
                # which are not part of this memory, so it is not redacted from the transcript.
                summary_texts.append(summary.content)
    plan.needles = needles
    _note_related(conn, plan, targets)

    # Transcript turns: the quoted spans (and verbatim copies of the content) become the marker.
    if sessions:
        smarks = ",".join("?" * len(sessions))
        patterns = [p for p in (span_pattern(n) for n in needles) if p is not None]
        for row in conn.execute(f"SELECT session_id, turn, content FROM turns WHERE session_id IN ({smarks}) ORDER BY session_id, turn", list(sessions)):
            spans = sum(len(p.findall(row["content"])) for p in patterns)
            if spans:
                plan.turns.append({"session_id": row["session_id"], "turn": row["turn"], "spans": spans})

    _plan_entities(conn, plan, targets, ids)
    names = [n for e in plan.entities for n in [e["name"], *e["aliases"]] if len(n.strip()) >= MIN_NAME_CHARS]
    plan.log_needles = list(dict.fromkeys([*needles, *(t for t in summary_texts if len(t.strip()) >= MIN_NEEDLE_CHARS), *names]))
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
        if _entity_used_elsewhere(conn, entity_id, ids):
            continue
        entity = conn.execute("SELECT * FROM entities WHERE id = ?", (entity_id,)).fetchone()
        if entity is None:
            continue
        if entity["kind"] == "person" and entity["scope_kind"] == "user" and normalise_alias(entity["canonical_name"]) == normalise_alias(entity["scope_id"]):
            continue  # the user's own person entity: its name is the user id, not part of this memory
        aliases = [r["alias"] for r in conn.execute("SELECT alias FROM entity_aliases WHERE entity_id = ?", (entity_id,))]
        plan.entities.append({"id": entity_id, "name": entity["canonical_name"], "aliases": aliases, "why": entity_ids[entity_id]})


def _named_orphans(conn: sqlite3.Connection, targets: list[Record]) -> list[str]:
    """Entities of the targets' scopes with an alias the targets' text holds as a whole phrase
    (looked up by every phrase of up to ``MAX_NAME_WORDS`` words on the alias index)."""
    found: list[str] = []
    for target in targets:
        texts = [t for t in (target.content, target.evidence) if t]
        phrases: set[str] = set()
        for text in texts:
            words = text.split()
            for size in range(1, MAX_NAME_WORDS + 1):
                for i in range(len(words) - size + 1):
                    phrase = normalise_alias(" ".join(words[i:i + size]))
                    if len(phrase) >= MIN_NAME_CHARS:
                        phrases.add(phrase)
        if not phrases:
            continue
        phrases_list = sorted(phrases)
        rows = conn.execute(
            f"SELECT DISTINCT a.entity_id, a.alias FROM entity_aliases a JOIN entities e ON e.id = a.entity_id "
            f"WHERE a.alias_norm IN ({marks_for(phrases_list)}) AND e.scope_kind = ? AND e.scope_id = ? AND e.status != 'merged'",
            [*phrases_list, target.scope_kind, target.scope_id]).fetchall()
        for row in rows:
            linked = conn.execute("SELECT 1 FROM record_entities WHERE entity_id = ? LIMIT 1", (row["entity_id"],)).fetchone()
            if linked is None and any(names_in(t, [row["alias"]]) for t in texts):
                found.append(row["entity_id"])
    return found


def _entity_used_elsewhere(conn: sqlite3.Connection, entity_id: str, record_ids: list[str]) -> bool:
    marks = marks_for(record_ids)
    linked = conn.execute(
        f"SELECT 1 FROM record_entities WHERE entity_id = ? AND record_id NOT IN ({marks}) LIMIT 1", [entity_id, *record_ids]
    ).fetchone()
    subject = conn.execute(
        f"SELECT 1 FROM records WHERE subject_entity_id = ? AND id NOT IN ({marks}) LIMIT 1", [entity_id, *record_ids]
    ).fetchone()
    merged = conn.execute("SELECT 1 FROM entities WHERE merged_into = ? LIMIT 1", (entity_id,)).fetchone()
    return bool(linked or subject or merged)


def apply_erasure(conn: sqlite3.Connection, plan: ErasurePlan, *, now: str) -> None:
    """Erase everything ``plan`` lists, inside the caller's write transaction.

    Tombstones keep their id, type, version, lineage, scope, status and times; content, evidence,
    attribute, subject, tags, embedding and entity links go.
    """
    ids = plan.record_ids
    marks = marks_for(ids)
    for record_id in ids:
        update_record(
            conn, record_id, content="", evidence=None, embedding=None, embed_dim=None, tags=[], attribute=None,
            subject=None, subject_entity_id=None, status="deleted", deleted_at=now, updated_at=now, review_reason=None,
        )
    conn.execute(f"DELETE FROM record_entities WHERE record_id IN ({marks})", ids)
    for entity in plan.entities:
        conn.execute("DELETE FROM entity_aliases WHERE entity_id = ?", (entity["id"],))
        conn.execute("DELETE FROM entities WHERE id = ?", (entity["id"],))
    patterns = [p for p in (span_pattern(n) for n in plan.needles) if p is not None]
    for turn in plan.turns:
        row = conn.execute("SELECT content FROM turns WHERE session_id = ? AND turn = ?", (turn["session_id"], turn["turn"])).fetchone()
        text = row["content"]
        for pattern in patterns:
            text = pattern.sub(MARKER, text)
        conn.execute("UPDATE turns SET content = ? WHERE session_id = ? AND turn = ?", (text, turn["session_id"], turn["turn"]))
    apply_logs(conn, plan)
