"""What forgetting a record erases, and erasing it.

A memory is not only its ``records`` row. The same words live in the transcript turn it was
quoted from, in a session summary that repeated that turn, in extraction candidates and their
review, in the search log (extraction looks related records up with the candidate's text), in the
write log, in audit-event reasons, and in entity names that only this record introduced. The FTS
index keeps its terms until its segments are merged, and SQLite keeps old page images in the WAL
until a checkpoint truncates it.

:func:`plan_erasure` finds all of it without writing (the admin app shows the plan before the
user confirms, :meth:`MemoryService.forget_preview`); :func:`apply_erasure` erases it inside the
caller's transaction. Matching is case-insensitive and whitespace-tolerant, on texts of at least
``MIN_NEEDLE_CHARS`` characters so a short word never wipes unrelated rows.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from ..policy.rules import normalise_alias
from ..store.db import dumps, loads
from ..store.migrations_hardening import REDACTED_REASON
from ..store.records import Record, fetch_records, update_record

MARKER = "[forgotten]"
REDACTED_JSON = dumps({"redacted": True})
MIN_NEEDLE_CHARS = 8
MIN_NAME_CHARS = 3


@dataclass
class ErasurePlan:
    """Everything one forget will erase, by place. ``to_dict`` is what the admin app shows."""

    requested: str
    records: list[dict[str, Any]] = field(default_factory=list)  # {id, version, why}
    turns: list[dict[str, Any]] = field(default_factory=list)  # {session_id, turn, spans}
    entities: list[dict[str, Any]] = field(default_factory=list)  # {id, name, aliases}
    candidates: list[tuple[str, int, int]] = field(default_factory=list)  # (run_id, attempt, idx)
    search_log: list[str] = field(default_factory=list)
    write_log: list[int] = field(default_factory=list)
    events: list[int] = field(default_factory=list)
    session_contexts: list[str] = field(default_factory=list)  # sessions whose recorded prefix holds the text
    host_memory: list[str] = field(default_factory=list)  # host_memory_decisions rows that issued or quoted the text
    needles: list[str] = field(default_factory=list)  # internal: the memory's texts (redacted from transcripts)
    log_needles: list[str] = field(default_factory=list)  # internal: those plus summaries and entity names (from logs)

    @property
    def record_ids(self) -> list[str]:
        return [r["id"] for r in self.records]

    def to_dict(self) -> dict[str, Any]:
        """The plan without the erased texts themselves (safe to log or display)."""
        return {
            "requested": self.requested,
            "records": self.records,
            "transcript_turns": self.turns,
            "entities_removed": [{k: v for k, v in e.items()} for e in self.entities],
            "extraction_candidates": [{"run_id": r, "attempt": a, "idx": i} for r, a, i in self.candidates],
            "search_log_rows": self.search_log,
            "write_log_rows": self.write_log,
            "event_reasons_redacted": len(self.events),
            "session_prefixes": self.session_contexts,
            "host_memory_decisions": self.host_memory,
            "index": "FTS rows removed and the FTS index merged; vectors marked dead; WAL truncated",
        }

    def summary_lines(self) -> list[str]:
        """One plain line per place, for a confirmation form."""
        lines = []
        for rec in self.records:
            lines.append(f"record {rec['id']} (version {rec['version']}): {rec['why']}")
        for turn in self.turns:
            lines.append(f"transcript {turn['session_id']} turn {turn['turn']}: {turn['spans']} quoted span(s) replaced by {MARKER}")
        for ent in self.entities:
            lines.append(f"entity {ent['id']} and its {len(ent['aliases'])} alias(es): introduced only by this memory")
        if self.candidates:
            lines.append(f"{len(self.candidates)} extraction candidate(s) redacted")
        if self.search_log:
            lines.append(f"{len(self.search_log)} search-log row(s) redacted (queries that repeated the text)")
        if self.write_log:
            lines.append(f"{len(self.write_log)} write-log row(s) redacted")
        if self.events:
            lines.append(f"{len(self.events)} audit-event reason(s) replaced by {MARKER}")
        if self.session_contexts:
            lines.append(f"{len(self.session_contexts)} recorded session prefix(es) (ambient profile): the text replaced by {MARKER}")
        if self.host_memory:
            lines.append(f"{len(self.host_memory)} host-issued memory decision(s) redacted")
        return lines


def _span_pattern(text: str) -> re.Pattern[str] | None:
    words = text.split()
    if not words:
        return None
    parts = []
    for word in words:
        escaped = re.escape(word)
        escaped = escaped.replace("'", "['\u2018\u2019]").replace('"', '["\u201c\u201d]')
        parts.append(escaped)
    return re.compile(r"\s+".join(parts), re.IGNORECASE)


def _contains_any(text: str | None, needles: list[str]) -> bool:
    if not text:
        return False
    folded = " ".join(text.casefold().split())
    return any(" ".join(n.casefold().split()) in folded for n in needles)


def _like_rows(conn: sqlite3.Connection, sql: str, columns: list[str], needles: list[str]) -> list[sqlite3.Row]:
    """Rows where any of ``columns`` contains any needle (a cheap LIKE prefilter, then an exact check)."""
    if not needles:
        return []
    clauses, params = [], []
    for column in columns:
        for needle in needles:
            # LIKE is case-insensitive for ASCII; the Python check below settles the rest.
            clauses.append(f"{column} LIKE ? ESCAPE '\\'")
            word = max(needle.split(), key=len)  # the most selective word narrows the scan most
            params.append("%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    rows = conn.execute(f"{sql} WHERE {' OR '.join(clauses)}", params).fetchall()
    return [row for row in rows if any(_contains_any(row[c], needles) for c in columns)]


def _needles_of(record: Record) -> list[str]:
    texts = [record.content, record.evidence or ""]
    return [t.strip() for t in texts if t and len(t.strip()) >= MIN_NEEDLE_CHARS]


def plan_erasure(conn: sqlite3.Connection, record: Record) -> ErasurePlan:
    """Find every place that holds ``record`` (and its earlier versions); writes nothing."""
    plan = ErasurePlan(requested=record.id)
    targets = fetch_records(
        conn, "r.lineage_id = ? AND r.version <= ? AND r.status != 'deleted' ORDER BY r.version DESC",
        (record.lineage_id, record.version),
    )
    for target in targets:
        why = "the record asked to be forgotten" if target.id == record.id else "an earlier version of it"
        plan.records.append({"id": target.id, "version": target.version, "why": why})
    needles: list[str] = []
    for target in targets:
        needles.extend(_needles_of(target))
    # Candidate texts of the extraction runs that produced these records (the reviewer may have
    # narrowed the text, and extraction looked related records up with the original wording).
    ids = [t.id for t in targets]
    marks = ",".join("?" * len(ids))
    for row in conn.execute(f"SELECT run_id, attempt, idx, candidate FROM extraction_candidates WHERE record_id IN ({marks})", ids):
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
            if same_turn or _contains_any(summary.content, needles) or _contains_any(summary.evidence, needles):
                targets.append(summary)
                ids.append(summary.id)
                plan.records.append({"id": summary.id, "version": summary.version,
                                     "why": "a session summary that quotes the same turn or repeats the text"})
                # Its content goes from the logs too; its own quote may be another turn's words,
                # which are not part of this memory, so it is not redacted from the transcript.
                summary_texts.append(summary.content)
    plan.needles = needles

    # Transcript turns: the quoted spans (and verbatim copies of the content) become the marker.
    if sessions:
        smarks = ",".join("?" * len(sessions))
        patterns = [p for p in (_span_pattern(n) for n in needles) if p is not None]
        for row in conn.execute(f"SELECT session_id, turn, content FROM turns WHERE session_id IN ({smarks}) ORDER BY session_id, turn", list(sessions)):
            spans = sum(len(p.findall(row["content"])) for p in patterns)
            if spans:
                plan.turns.append({"session_id": row["session_id"], "turn": row["turn"], "spans": spans})

    # Entities no other record links to (created for this memory) lose their names and aliases.
    entity_ids = {link["entity_id"] for t in targets for link in t.entity_links}
    entity_ids |= {t.subject_entity_id for t in targets if t.subject_entity_id}
    for entity_id in sorted(entity_ids):
        if _entity_used_elsewhere(conn, entity_id, ids):
            continue
        entity = conn.execute("SELECT * FROM entities WHERE id = ?", (entity_id,)).fetchone()
        if entity is None:
            continue
        if entity["kind"] == "person" and entity["scope_kind"] == "user" and normalise_alias(entity["canonical_name"]) == normalise_alias(entity["scope_id"]):
            continue  # the user's own person entity: its name is the user id, not part of this memory
        aliases = [r["alias"] for r in conn.execute("SELECT alias FROM entity_aliases WHERE entity_id = ?", (entity_id,))]
        plan.entities.append({"id": entity_id, "name": entity["canonical_name"], "aliases": aliases})
    names = [n for e in plan.entities for n in [e["name"], *e["aliases"]] if len(n.strip()) >= MIN_NAME_CHARS]
    log_needles = list(dict.fromkeys([*needles, *(t for t in summary_texts if len(t.strip()) >= MIN_NEEDLE_CHARS), *names]))
    plan.log_needles = log_needles

    plan.candidates = [
        (r["run_id"], r["attempt"], r["idx"])
        for r in conn.execute(f"SELECT run_id, attempt, idx FROM extraction_candidates WHERE record_id IN ({marks_for(ids)})", ids)
    ]
    seen = set(plan.candidates)
    for row in _like_rows(conn, "SELECT run_id, attempt, idx, candidate, review, detail FROM extraction_candidates",
                          ["candidate", "review", "detail"], log_needles):
        key = (row["run_id"], row["attempt"], row["idx"])
        if key not in seen:
            plan.candidates.append(key)
            seen.add(key)
    # Search-log rows whose query repeats the text (extraction's own lookups use the candidate's
    # words), or whose results included these records (their explanations name linked entities).
    # The large trace column is not scanned: those two conditions select the rows that matter.
    # Entity names are left out of the query match: another principal who typed the same name
    # searched for their own reasons, and their log row is not part of this memory.
    text_needles = [n for n in log_needles if n not in names]
    plan.search_log = [r["id"] for r in _like_rows(
        conn, "SELECT id, raw_query, rewritten_query FROM search_log", ["raw_query", "rewritten_query"], text_needles)]
    known_searches = set(plan.search_log)
    for record_id in ids:
        for row in conn.execute("SELECT id FROM search_log WHERE result_ids LIKE ?", (f'%"{record_id}"%',)):
            if row["id"] not in known_searches:
                plan.search_log.append(row["id"])
                known_searches.add(row["id"])
    plan.write_log = [r["seq"] for r in conn.execute(f"SELECT seq FROM write_log WHERE record_id IN ({marks_for(ids)})", ids)]
    known = set(plan.write_log)
    plan.write_log.extend(r["seq"] for r in _like_rows(conn, "SELECT seq, candidate, validation FROM write_log",
                                                       ["candidate", "validation"], log_needles) if r["seq"] not in known)
    plan.events = [
        r["seq"] for r in conn.execute(
            f"SELECT seq FROM events WHERE record_id IN ({marks_for(ids)}) AND reason IS NOT NULL AND reason != ? "
            "AND kind != 'record.forgotten'", [*ids, REDACTED_REASON])
    ]
    # Host-issued memory decisions (issue 15): the message appended for the model quotes the record.
    host_rows = {r["id"] for r in _like_rows(conn, "SELECT id, gaps, message FROM host_memory_decisions", ["gaps", "message"], log_needles)}
    for record_id in ids:
        host_rows.update(r["id"] for r in conn.execute(
            "SELECT id FROM host_memory_decisions WHERE candidates LIKE ?", (f'%"{record_id}"%',)))
    plan.host_memory = sorted(host_rows)
    known_events = set(plan.events)
    plan.events.extend(r["seq"] for r in _like_rows(conn, "SELECT seq, reason FROM events", ["reason"], log_needles)
                       if r["seq"] not in known_events and r["reason"] != REDACTED_REASON)
    # Recorded prompt prefixes (ambient profiles, docs/ambient.md) that hold one of these records
    # or repeat its text: what the model saw stays auditable, the forgotten words do not.
    contexts = {r["session_id"] for r in _like_rows(conn, "SELECT session_id, profile_text, system_text FROM session_context",
                                                    ["profile_text", "system_text"], needles)}
    for record_id in ids:
        contexts.update(r["session_id"] for r in conn.execute(
            "SELECT session_id FROM session_context WHERE profile_items LIKE ?", (f'%"{record_id}"%',)))
    plan.session_contexts = sorted(contexts)
    return plan


def _scrub(value: Any, needles: list[str], record_ids: set[str]) -> Any:
    """``value`` (parsed JSON) with every string repeating a needle replaced by the marker, and
    the entity links of the given records emptied."""
    if isinstance(value, str):
        return MARKER if _contains_any(value, needles) else value
    if isinstance(value, list):
        return [_scrub(item, needles, record_ids) for item in value]
    if isinstance(value, dict):
        out = {key: _scrub(item, needles, record_ids) for key, item in value.items()}
        if out.get("record_id") in record_ids and "entity_links" in out:
            out["entity_links"] = []
        return out
    return value


def marks_for(values: list[Any]) -> str:
    return ",".join("?" * len(values)) or "NULL"


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
    patterns = [p for p in (_span_pattern(n) for n in plan.needles) if p is not None]
    for turn in plan.turns:
        row = conn.execute("SELECT content FROM turns WHERE session_id = ? AND turn = ?", (turn["session_id"], turn["turn"])).fetchone()
        text = row["content"]
        for pattern in patterns:
            text = pattern.sub(MARKER, text)
        conn.execute("UPDATE turns SET content = ? WHERE session_id = ? AND turn = ?", (text, turn["session_id"], turn["turn"]))
    for run_id, attempt, idx in plan.candidates:
        conn.execute(
            "UPDATE extraction_candidates SET candidate = ?, review = ?, detail = ? WHERE run_id = ? AND attempt = ? AND idx = ?",
            (REDACTED_JSON, REDACTED_JSON, REDACTED_JSON, run_id, attempt, idx),
        )
    log_needles = plan.log_needles
    for search_id in plan.search_log:
        row = conn.execute("SELECT raw_query, rewritten_query, request, trace FROM search_log WHERE id = ?", (search_id,)).fetchone()
        # Keep the row's shape (a logged search can still be rebuilt and shows the record as
        # deleted); only the strings that repeat the text and the forgotten records' entity
        # links go.
        needles = [*log_needles, *(q for q in (row["raw_query"], row["rewritten_query"]) if q and _contains_any(q, log_needles))]
        # (Rows selected because they returned the record: their principals could read it, so
        # every trace string naming its text or its removed entities goes.)
        conn.execute(
            "UPDATE search_log SET raw_query = ?, rewritten_query = ?, request = ?, trace = ? WHERE id = ?",
            (MARKER if _contains_any(row["raw_query"], log_needles) else row["raw_query"],
             None if _contains_any(row["rewritten_query"], log_needles) else row["rewritten_query"],
             dumps(_scrub(loads(row["request"], {}), needles, set(ids))),
             dumps(_scrub(loads(row["trace"], {}), needles, set(ids))), search_id),
        )
    for seq in plan.write_log:
        conn.execute("UPDATE write_log SET candidate = ?, validation = ? WHERE seq = ?", (REDACTED_JSON, REDACTED_JSON, seq))
    for seq in plan.events:
        conn.execute("UPDATE events SET reason = ? WHERE seq = ?", (REDACTED_REASON, seq))
    conn.execute(f"UPDATE ambient_decisions SET reason = ? WHERE record_id IN ({marks}) AND reason IS NOT NULL",
                 [REDACTED_REASON, *ids])
    for session_id in plan.session_contexts:
        row = conn.execute("SELECT profile_text, system_text, profile_items FROM session_context WHERE session_id = ?",
                           (session_id,)).fetchone()
        items = loads(row["profile_items"], []) or []
        texts = list(plan.needles) + [i.get("text") for i in items if i.get("record_id") in ids and i.get("text")]
        for item in items:
            if item.get("record_id") in ids or _contains_any(item.get("text"), plan.needles):
                item["text"] = MARKER
        item_patterns = [p for p in (_span_pattern(t) for t in texts) if p is not None]
        redacted = []
        for text in (row["profile_text"], row["system_text"]):
            for pattern in item_patterns:
                text = pattern.sub(MARKER, text) if text else text
            redacted.append(text)
        conn.execute("UPDATE session_context SET profile_text = ?, system_text = ?, profile_items = ? WHERE session_id = ?",
                     (*redacted, dumps(items), session_id))
    for decision_id in plan.host_memory:
        row = conn.execute("SELECT gaps, candidates, message FROM host_memory_decisions WHERE id = ?", (decision_id,)).fetchone()
        message = row["message"]
        if message is not None:
            # the same one-line JSON the model read, with every string repeating the text replaced
            message = json.dumps(_scrub(loads(message, {}), log_needles, set(ids)), ensure_ascii=False, default=str)
        # a model's verdict on a forgotten record may paraphrase it: its reason goes whole
        candidates = [{**c, "reason": MARKER} if isinstance(c, dict) and c.get("record_id") in ids else c
                      for c in _scrub(loads(row["candidates"], []), log_needles, set(ids))]
        conn.execute("UPDATE host_memory_decisions SET gaps = ?, candidates = ?, message = ? WHERE id = ?",
                     (dumps(_scrub(loads(row["gaps"], []), log_needles, set(ids))), dumps(candidates), message, decision_id))
