"""Named queries of a forget: finding every row that holds a memory, and erasing it there.

``ingest/erasure.py`` and ``ingest/erasure_logs.py`` decide what goes (they hold the text rules);
these read and write the rows, inside the forget's transaction. A LIKE prefilter
(:func:`rows_like`, :func:`keys_like`) narrows a log scan; the caller checks each row exactly.
Table and column names are written in code, never taken from input; only values are parameters.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from .records import Record, fetch_records

_LIVE = "('provisional','confirmed')"


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


# -- records ----------------------------------------------------------------------------------------


def lineage_records(conn, lineage_id: str, version: int) -> list[Record]:
    """The versions of a lineage up to ``version`` that are not yet tombstones, newest first."""
    return fetch_records(conn, "r.lineage_id = ? AND r.version <= ? AND r.status != 'deleted' ORDER BY r.version DESC",
                         (lineage_id, version))


def live_records_quoting_turn(conn, source_ref: str, turn: int, scope_kind: str, scope_id: str) -> list[Record]:
    """Live records (not session summaries) of one scope whose evidence is this turn (without links)."""
    return fetch_records(conn, f"r.source_ref = ? AND r.evidence_turn = ? AND r.status IN {_LIVE} "
                         "AND r.source_kind != 'session_summary' AND r.scope_kind = ? AND r.scope_id = ?",
                         (source_ref, turn, scope_kind, scope_id), links=False)


def live_records_containing(conn, scope_kind: str, scope_id: str, like: str) -> list[Record]:
    """Live records (not session summaries) of one scope whose content is LIKE ``like`` (without links)."""
    return fetch_records(conn, f"r.scope_kind = ? AND r.scope_id = ? AND r.status IN {_LIVE} "
                         "AND r.source_kind != 'session_summary' AND r.content LIKE ?", (scope_kind, scope_id, like), links=False)


def session_summaries_of(conn, sessions: Sequence[str]) -> list[Record]:
    """Session summaries (not tombstones) made from, or quoting, any of these sessions."""
    if not sessions:
        return []
    marks = _marks(sessions)
    return fetch_records(conn, f"r.source_kind = 'session_summary' AND r.status != 'deleted' AND (r.source_ref IN ({marks}) "
                         f"OR r.evidence_session_id IN ({marks}))", [*sessions, *sessions])


def candidate_jsons_of_records(conn, record_ids: Sequence[str]) -> list[str]:
    """The ``candidate`` JSON of the extraction candidates that produced these records."""
    if not record_ids:
        return []
    return [row["candidate"] for row in conn.execute(
        f"SELECT candidate FROM extraction_candidates WHERE record_id IN ({_marks(record_ids)})", list(record_ids))]


def turns_of_sessions(conn, sessions: Sequence[str]) -> list[sqlite3.Row]:
    """``session_id, turn, content`` of every turn of these sessions, in order."""
    if not sessions:
        return []
    return conn.execute(f"SELECT session_id, turn, content FROM turns WHERE session_id IN ({_marks(sessions)}) "
                        "ORDER BY session_id, turn", list(sessions)).fetchall()


# -- entities ---------------------------------------------------------------------------------------


def live_aliases_in_scope(conn, alias_norms: Sequence[str], scope_kind: str, scope_id: str) -> list[sqlite3.Row]:
    """``entity_id, alias`` of the live entities of one scope with any of these normalised aliases."""
    if not alias_norms:
        return []
    return conn.execute(
        f"SELECT DISTINCT a.entity_id, a.alias FROM entity_aliases a JOIN entities e ON e.id = a.entity_id "
        f"WHERE a.alias_norm IN ({_marks(alias_norms)}) AND e.scope_kind = ? AND e.scope_id = ? AND e.status != 'merged'",
        [*alias_norms, scope_kind, scope_id]).fetchall()


def entity_is_linked(conn, entity_id: str) -> bool:
    """Whether any record links to the entity."""
    return conn.execute("SELECT 1 FROM record_entities WHERE entity_id = ? LIMIT 1", (entity_id,)).fetchone() is not None


def entity_used_outside(conn, entity_id: str, record_ids: Sequence[str]) -> bool:
    """Whether a record other than ``record_ids`` links to the entity or has it as subject, or
    another entity was merged into it."""
    marks = _marks(record_ids) or "NULL"
    linked = conn.execute(f"SELECT 1 FROM record_entities WHERE entity_id = ? AND record_id NOT IN ({marks}) LIMIT 1",
                          [entity_id, *record_ids]).fetchone()
    subject = conn.execute(f"SELECT 1 FROM records WHERE subject_entity_id = ? AND id NOT IN ({marks}) LIMIT 1",
                           [entity_id, *record_ids]).fetchone()
    merged = conn.execute("SELECT 1 FROM entities WHERE merged_into = ? LIMIT 1", (entity_id,)).fetchone()
    return bool(linked or subject or merged)


def unlink_records(conn, record_ids: Sequence[str]) -> None:
    """Drop every entity link of these records."""
    if record_ids:
        conn.execute(f"DELETE FROM record_entities WHERE record_id IN ({_marks(record_ids)})", list(record_ids))


def delete_entity(conn, entity_id: str) -> None:
    """Delete an entity and its aliases."""
    conn.execute("DELETE FROM entity_aliases WHERE entity_id = ?", (entity_id,))
    conn.execute("DELETE FROM entities WHERE id = ?", (entity_id,))


def turn_content(conn, session_id: str, turn: int) -> str:
    """The text of one transcript turn."""
    return conn.execute("SELECT content FROM turns WHERE session_id = ? AND turn = ?", (session_id, turn)).fetchone()["content"]


def set_turn_content(conn, session_id: str, turn: int, content: str) -> None:
    """Replace the text of one transcript turn."""
    conn.execute("UPDATE turns SET content = ? WHERE session_id = ? AND turn = ?", (content, session_id, turn))


# -- log scans --------------------------------------------------------------------------------------


def rows_like(conn, table: str, columns: Sequence[str], like_columns: Sequence[str], patterns: Sequence[str]) -> list[sqlite3.Row]:
    """``columns`` of the rows of ``table`` where any of ``like_columns`` is LIKE any of ``patterns``
    (``LIKE ? ESCAPE '\\'``: the patterns' own wildcards escaped by the caller)."""
    if not patterns:
        return []
    clauses = [f"{column} LIKE ? ESCAPE '\\'" for column in like_columns for _ in patterns]
    params = [pattern for _ in like_columns for pattern in patterns]
    return conn.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE {' OR '.join(clauses)}", params).fetchall()


def keys_like(conn, table: str, key: str, column: str, pattern: str) -> list[Any]:
    """``key`` of the rows of ``table`` whose ``column`` is LIKE ``pattern`` (a JSON text holding an id)."""
    return [row[0] for row in conn.execute(f"SELECT {key} FROM {table} WHERE {column} LIKE ?", (pattern,))]


def candidate_keys_of_records(conn, record_ids: Sequence[str]) -> list[tuple[str, int, int]]:
    """``(run_id, attempt, idx)`` of the extraction candidates that produced these records."""
    if not record_ids:
        return []
    return [(r["run_id"], r["attempt"], r["idx"]) for r in conn.execute(
        f"SELECT run_id, attempt, idx FROM extraction_candidates WHERE record_id IN ({_marks(record_ids)})", list(record_ids))]


def write_log_seqs_of_records(conn, record_ids: Sequence[str]) -> list[int]:
    """The write-log rows of these records."""
    if not record_ids:
        return []
    return [r["seq"] for r in conn.execute(f"SELECT seq FROM write_log WHERE record_id IN ({_marks(record_ids)})", list(record_ids))]


def event_seqs_with_reason(conn, record_ids: Sequence[str], redacted: str) -> list[int]:
    """Events of these records (not their ``record.forgotten``) whose reason is set and not yet ``redacted``."""
    if not record_ids:
        return []
    return [r["seq"] for r in conn.execute(
        f"SELECT seq FROM events WHERE record_id IN ({_marks(record_ids)}) AND reason IS NOT NULL AND reason != ? "
        "AND kind != 'record.forgotten'", [*record_ids, redacted])]


def search_queries_of(conn, search_id: str) -> sqlite3.Row:
    """``raw_query, rewritten_query`` of a logged search."""
    return conn.execute("SELECT raw_query, rewritten_query FROM search_log WHERE id = ?", (search_id,)).fetchone()


# -- erasing in the logs ----------------------------------------------------------------------------


def redact_candidate(conn, run_id: str, attempt: int, idx: int, redacted_json: str) -> None:
    """Replace an extraction candidate's candidate, review and detail."""
    conn.execute("UPDATE extraction_candidates SET candidate = ?, review = ?, detail = ? WHERE run_id = ? AND attempt = ? AND idx = ?",
                 (redacted_json, redacted_json, redacted_json, run_id, attempt, idx))


def attempt_error(conn, run_id: str, attempt: int) -> sqlite3.Row:
    """``error, detail`` of an extraction attempt."""
    return conn.execute("SELECT error, detail FROM extraction_attempts WHERE run_id = ? AND attempt = ?", (run_id, attempt)).fetchone()


def set_attempt_error(conn, run_id: str, attempt: int, error: str | None, detail_json: str) -> None:
    """Replace an extraction attempt's error and detail."""
    conn.execute("UPDATE extraction_attempts SET error = ?, detail = ? WHERE run_id = ? AND attempt = ?", (error, detail_json, run_id, attempt))


def run_error(conn, run_id: str) -> str | None:
    """An extraction run's error."""
    return conn.execute("SELECT error FROM extraction_runs WHERE id = ?", (run_id,)).fetchone()["error"]


def set_run_error(conn, run_id: str, error: str | None) -> None:
    """Replace an extraction run's error."""
    conn.execute("UPDATE extraction_runs SET error = ? WHERE id = ?", (error, run_id))


def redact_write_log(conn, seq: int, redacted_json: str) -> None:
    """Replace a write-log row's candidate and validation."""
    conn.execute("UPDATE write_log SET candidate = ?, validation = ? WHERE seq = ?", (redacted_json, redacted_json, seq))


def write_log_validation(conn, seq: int) -> str:
    """A write-log row's validation JSON."""
    return conn.execute("SELECT validation FROM write_log WHERE seq = ?", (seq,)).fetchone()["validation"]


def set_write_log_validation(conn, seq: int, validation_json: str) -> None:
    """Replace a write-log row's validation."""
    conn.execute("UPDATE write_log SET validation = ? WHERE seq = ?", (validation_json, seq))


def set_event_reason(conn, seq: int, reason: str) -> None:
    """Replace an event's reason (the schema lets only the redaction marker through)."""
    conn.execute("UPDATE events SET reason = ? WHERE seq = ?", (reason, seq))


def redact_ambient_reasons(conn, record_ids: Sequence[str], reason: str) -> None:
    """Replace the reasons of the ambient decisions about these records."""
    if record_ids:
        conn.execute(f"UPDATE ambient_decisions SET reason = ? WHERE record_id IN ({_marks(record_ids)}) AND reason IS NOT NULL",
                     [reason, *record_ids])


def search_log_texts(conn, search_id: str) -> sqlite3.Row:
    """``raw_query, rewritten_query, request, trace, empty_reason`` of a logged search."""
    return conn.execute("SELECT raw_query, rewritten_query, request, trace, empty_reason FROM search_log WHERE id = ?",
                        (search_id,)).fetchone()


def set_search_log_texts(conn, search_id: str, raw_query: str, rewritten_query: str | None, request_json: str,
                         trace_json: str, empty_reason: str | None) -> None:
    """Replace a logged search's texts (the row keeps its shape)."""
    conn.execute("UPDATE search_log SET raw_query = ?, rewritten_query = ?, request = ?, trace = ?, empty_reason = ? WHERE id = ?",
                 (raw_query, rewritten_query, request_json, trace_json, empty_reason, search_id))


def session_context_texts(conn, session_id: str) -> sqlite3.Row:
    """``profile_text, system_text, profile_items`` of a session's recorded prefix."""
    return conn.execute("SELECT profile_text, system_text, profile_items FROM session_context WHERE session_id = ?",
                        (session_id,)).fetchone()


def set_session_context_texts(conn, session_id: str, profile_text: str | None, system_text: str | None, items_json: str) -> None:
    """Replace a session's recorded prefix texts."""
    conn.execute("UPDATE session_context SET profile_text = ?, system_text = ?, profile_items = ? WHERE session_id = ?",
                 (profile_text, system_text, items_json, session_id))


def host_decision_texts(conn, decision_id: str) -> sqlite3.Row:
    """``gaps, search_ids, candidates, message, reason`` of a host-memory decision."""
    return conn.execute("SELECT gaps, search_ids, candidates, message, reason FROM host_memory_decisions WHERE id = ?",
                        (decision_id,)).fetchone()


def set_host_decision_texts(conn, decision_id: str, gaps_json: str, candidates_json: str, message: str | None,
                            reason: str | None) -> None:
    """Replace a host-memory decision's texts."""
    conn.execute("UPDATE host_memory_decisions SET gaps = ?, candidates = ?, message = ?, reason = ? WHERE id = ?",
                 (gaps_json, candidates_json, message, reason, decision_id))
