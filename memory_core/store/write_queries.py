"""Named queries of the write path: entities and their aliases, record links, procedures, the
transcript turns evidence is found in, the records a write is compared with, same-fact lookups
and the write log.

The write stages (``ingest/``) call these with the transaction's connection and hold no SQL of
their own. Every statement is in the SQLite dialect; the PostgreSQL backend translates it
(``store/pg/translate.py``), so both backends run the same text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from .batching import read_later
from .records import SELECT_COLUMNS, Record, fetch_records


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def _write(conn, sql: str, params: Sequence[Any]) -> None:
    """A write whose result nobody reads: on PostgreSQL, inside a transaction, queued to travel with
    the transaction's next statement (``PgConnection.defer``: it still runs before that statement,
    and an error it raises rolls the transaction back); elsewhere run at once."""
    defer = getattr(conn, "defer", None)
    if defer is None:
        conn.execute(sql, params)
    else:
        defer(sql, params)


# -- entities ---------------------------------------------------------------------------------------


def entities_by_alias(conn, alias_norm: str, scope_keys: Sequence[str]) -> list[sqlite3.Row]:
    """Live entities with the normalised alias in any of ``scope_keys``, oldest first."""
    if not scope_keys:
        return []
    return conn.execute(
        "SELECT DISTINCT e.* FROM entity_aliases a JOIN entities e ON e.id = a.entity_id "
        f"WHERE a.alias_norm = ? AND e.status != 'merged' AND (e.scope_kind || ':' || e.scope_id) IN ({_marks(scope_keys)}) "
        "ORDER BY e.created_at, e.id",
        [alias_norm, *scope_keys],
    ).fetchall()


def entity_in_scope_by_alias(conn, alias_norm: str, scope_kind: str, scope_id: str) -> str | None:
    """The id of a live entity of one scope with this normalised alias (the oldest), or None."""
    row = conn.execute(
        "SELECT e.id FROM entity_aliases a JOIN entities e ON e.id = a.entity_id WHERE a.alias_norm = ? "
        "AND e.scope_kind = ? AND e.scope_id = ? AND e.status != 'merged' ORDER BY e.created_at LIMIT 1",
        (alias_norm, scope_kind, scope_id),
    ).fetchone()
    return row["id"] if row else None


def insert_entity(conn, *, entity_id: str, kind: str, name: str, scope_kind: str, scope_id: str, status: str,
                  now: str, actor: str) -> None:
    """Insert one entity row (its aliases are added with :func:`insert_alias`)."""
    _write(conn,
        "INSERT INTO entities (id, kind, canonical_name, scope_kind, scope_id, status, created_at, created_by) "
        "VALUES (?,?,?,?,?,?,?,?)",
        (entity_id, kind, name, scope_kind, scope_id, status, now, actor),
    )


def insert_alias(conn, entity_id: str, alias: str, alias_norm: str) -> None:
    """Add an alias to an entity (an alias it already has is left as it is)."""
    _write(conn, "INSERT OR IGNORE INTO entity_aliases (entity_id, alias, alias_norm) VALUES (?,?,?)", (entity_id, alias, alias_norm))


def principal_entity_id(conn, user_id: str, alias_norm: str) -> str | None:
    """The id of ``user_id``'s own live person entity in ``user:<user_id>``, if it exists."""
    row = conn.execute(
        "SELECT e.id FROM entities e JOIN entity_aliases a ON a.entity_id = e.id "
        "WHERE e.kind = 'person' AND e.scope_kind = 'user' AND e.scope_id = ? AND a.alias_norm = ? "
        "AND e.status != 'merged' ORDER BY e.created_at LIMIT 1",
        (user_id, alias_norm),
    ).fetchone()
    return row["id"] if row else None


def link_record_entity(conn, record_id: str, entity_id: str, role: str) -> None:
    """Link a record to an entity; a ``subject`` link is never demoted to a mention."""
    _write(conn,
        "INSERT INTO record_entities (record_id, entity_id, role) VALUES (?,?,?) "
        "ON CONFLICT(record_id, entity_id) DO UPDATE SET role = CASE WHEN excluded.role = 'subject' THEN 'subject' ELSE record_entities.role END",
        (record_id, entity_id, role),
    )


# -- procedures -------------------------------------------------------------------------------------


def insert_procedure(conn, record_id: str, name: str, trigger: str, steps_json: str, pitfalls_json: str) -> None:
    """The procedure row of a procedural record version."""
    _write(conn, "INSERT INTO procedures (record_id, name, trigger, steps, pitfalls) VALUES (?,?,?,?,?)",
                 (record_id, name, trigger, steps_json, pitfalls_json))


def procedure_row(conn, record_id: str) -> sqlite3.Row | None:
    """``name, trigger, steps, pitfalls`` of a record's procedure (steps and pitfalls as JSON), or None."""
    return conn.execute(*procedure_statement(record_id)).fetchone()


def procedure_statement(record_id: str) -> tuple[str, tuple]:
    """:func:`procedure_row` as a statement, to read together with others (``store.batching``)."""
    return "SELECT name, trigger, steps, pitfalls FROM procedures WHERE record_id = ?", (record_id,)


# -- transcripts ------------------------------------------------------------------------------------


def session_turns(conn, session_id: str, role: str | None = None) -> list[sqlite3.Row]:
    """``turn, role, content, at`` of a session's turns (only ``role``'s when given), in order."""
    sql, params = "SELECT turn, role, content, at FROM turns WHERE session_id = ?", [session_id]
    if role:
        sql += " AND role = ?"
        params.append(role)
    return conn.execute(sql + " ORDER BY turn", params).fetchall()


def turn_role(conn, session_id: str, turn: int) -> str | None:
    """Who said turn ``turn`` of a session (None if there is no such turn)."""
    row = conn.execute("SELECT role FROM turns WHERE session_id = ? AND turn = ?", (session_id, turn)).fetchone()
    return row["role"] if row else None


# -- the records a write is compared with ----------------------------------------------------------


def live_records_on_subject(conn, subject: str, scope_kind: str, scope_id: str, limit: int | None = None) -> list[Record]:
    """The live (provisional or confirmed) records on ``subject`` (``<entity>:<attribute>``) in one
    scope, newest first (ties: the later seq first), at most ``limit``; without entity links."""
    # The unary + keeps SQLite on the subject index (the scope index is far less selective).
    where = ("r.subject = ? AND +r.scope_kind = ? AND +r.scope_id = ? AND r.status IN ('provisional','confirmed') "
             "ORDER BY r.created_at DESC, r.seq DESC")
    params: list[Any] = [subject, scope_kind, scope_id]
    if limit is not None:
        where += " LIMIT ?"
        params.append(int(limit))
    return fetch_records(conn, where, params, links=False)


def live_subject_cosines_later(conn, vector_literal: str, subject: str, scope_kind: str, scope_id: str):
    """PostgreSQL only: the cosine of ``vector_literal`` (pgvector input) with each record
    :func:`live_records_on_subject` reads (the expression and conditions of
    ``pg.vectors.cosines``), as a read sent with the next statement (rows ``seq, cosine``)."""
    return read_later(conn, "SELECT seq, -(embedding_vec <#> ?::vector) FROM records WHERE subject = ? AND scope_kind = ? "
                      "AND scope_id = ? AND status IN ('provisional','confirmed') AND embedding_vec IS NOT NULL",
                      [vector_literal, subject, scope_kind, scope_id])


def record_at_seq(conn, seq: int) -> Record | None:
    """The record stored at ``seq`` (whatever its status), without entity links; None if there is none."""
    found = fetch_records(conn, "r.seq = ?", (int(seq),), links=False)
    return found[0] if found else None


def records_with_ids(conn, ids: Sequence[str]) -> dict[str, Record]:
    """The records with these ids (whatever their status), by id, without entity links."""
    if not ids:
        return {}
    return {r.id: r for r in fetch_records(conn, f"r.id IN ({_marks(ids)})", list(ids), links=False)}


# -- same facts -------------------------------------------------------------------------------------


def live_rows_from_source(conn, source_ref: str, words: Sequence[str]) -> list[sqlite3.Row]:
    """The rows (:data:`~.records.SELECT_COLUMNS`) of the live records (not session summaries) from
    ``source_ref`` whose content holds every one of ``words`` (LIKE, so ASCII words only), oldest
    first: one lookup on the ``records_source`` index."""
    return conn.execute(*live_rows_from_source_statement(source_ref, words)).fetchall()


def live_rows_from_source_later(conn, source_ref: str, words: Sequence[str]):
    """:func:`live_rows_from_source` as a read whose rows are asked for later (``fetchall()``): on
    PostgreSQL it travels with the transaction's next statement (``store.batching.read_later``)."""
    return read_later(conn, *live_rows_from_source_statement(source_ref, words))


def live_rows_from_source_statement(source_ref: str, words: Sequence[str]) -> tuple[str, list[Any]]:
    where = ("r.source_ref = ? AND r.status IN ('provisional','confirmed') AND r.source_kind != 'session_summary'")
    params: list[Any] = [source_ref]
    for word in words:
        where += " AND r.content LIKE ?"
        params.append(f"%{word}%")
    return f"SELECT {SELECT_COLUMNS} FROM records r WHERE {where} ORDER BY r.created_at, r.seq", params


# -- the write log ----------------------------------------------------------------------------------

_LOG_SQL = (
    "INSERT INTO write_log (at, operation, agent_id, user_id, session_id, actor, outcome, record_id, status, source_kind, "
    "candidate, validation, stages, total_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


def insert_write_log(conn, values: Sequence[Any]) -> int:
    """Append one write-log row (``at, operation, agent_id, user_id, session_id, actor, outcome,
    record_id, status, source_kind, candidate, validation, stages, total_ms``, JSON as text); its seq."""
    return int(conn.execute(_LOG_SQL, tuple(values)).lastrowid)


def append_write_log(conn, values: Sequence[Any]) -> None:
    """As :func:`insert_write_log` when nobody needs the row's seq: on PostgreSQL, inside a
    transaction, the insert is deferred to travel with the transaction's next statement or COMMIT."""
    _write(conn, _LOG_SQL, tuple(values))
