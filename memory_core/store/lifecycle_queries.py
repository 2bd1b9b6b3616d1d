"""Named queries of a record's life after its write: forgetting (the full-text rows), entity
merges, due-review flags and provisional expiry (``ingest/lifecycle.py``, ``maintenance.py``).

Each takes the caller's connection (a write transaction where it writes) and holds the only SQL
of its statement; the PostgreSQL backend translates the SQLite dialect (``store/pg/translate.py``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

FTS_FORGETS_KEY = "fts_forgets_since_rebuild"  # store_meta: forgets since the FTS5 index was last rebuilt


def seqs_of(conn, record_ids: Sequence[str]) -> dict[str, int]:
    """The seq of each listed record, by id (a missing record is absent)."""
    if not record_ids:
        return {}
    rows = conn.execute(f"SELECT id, seq FROM records WHERE id IN ({','.join('?' * len(record_ids))})", list(record_ids))
    return {row["id"]: row["seq"] for row in rows}


def delete_fts_row(conn, seq: int) -> None:
    """Drop a record's full-text row."""
    conn.execute("DELETE FROM records_fts WHERE rowid = ?", (seq,))


def fts_forgets_since_rebuild(conn) -> int:
    """SQLite: how many forgets since the FTS5 index was last rebuilt."""
    row = conn.execute("SELECT COALESCE((SELECT value FROM store_meta WHERE key = ?), '0')", (FTS_FORGETS_KEY,)).fetchone()
    return int(row[0])


def merge_fts_segments(conn, rebuild: bool) -> None:
    """SQLite: merge the FTS5 index's segments (``optimize``) or re-index it from the stored text (``rebuild``)."""
    conn.execute("INSERT INTO records_fts(records_fts) VALUES('rebuild')" if rebuild else
                 "INSERT INTO records_fts(records_fts) VALUES('optimize')")


def set_fts_forgets_since_rebuild(conn, count: int) -> None:
    """SQLite: store the count :func:`fts_forgets_since_rebuild` reads."""
    conn.execute("INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                 (FTS_FORGETS_KEY, str(count)))


# -- entity merges ----------------------------------------------------------------------------------


def entity_row(conn, entity_id: str) -> sqlite3.Row | None:
    """The whole ``entities`` row, or None."""
    return conn.execute("SELECT * FROM entities WHERE id = ?", (entity_id,)).fetchone()


def entity_aliases(conn, entity_id: str) -> list[str]:
    """An entity's aliases as written."""
    return [row["alias"] for row in conn.execute("SELECT alias FROM entity_aliases WHERE entity_id = ?", (entity_id,)).fetchall()]


def entity_links(conn, entity_id: str) -> list[sqlite3.Row]:
    """``record_id, role`` of every record linked to an entity."""
    return conn.execute("SELECT record_id, role FROM record_entities WHERE entity_id = ?", (entity_id,)).fetchall()


def records_with_subject_entity(conn, entity_id: str) -> list[sqlite3.Row]:
    """``id, attribute, subject, status`` of the records whose subject is the entity."""
    return conn.execute("SELECT id, attribute, subject, status FROM records WHERE subject_entity_id = ?", (entity_id,)).fetchall()


def live_ids_with_subject(conn, subject: str) -> list[str]:
    """Ids of the live records on a subject (``<entity>:<attribute>``)."""
    rows = conn.execute("SELECT id FROM records WHERE subject = ? AND status IN ('provisional','confirmed')", (subject,)).fetchall()
    return [row["id"] for row in rows]


def drop_entity_links(conn, entity_id: str) -> None:
    """Unlink every record from an entity."""
    conn.execute("DELETE FROM record_entities WHERE entity_id = ?", (entity_id,))


def set_record_subject(conn, record_id: str, entity_id: str, subject: str | None, now: str) -> None:
    """Point a record's subject at another entity."""
    conn.execute("UPDATE records SET subject_entity_id = ?, subject = ?, updated_at = ? WHERE id = ?", (entity_id, subject, now, record_id))


def conflicts_json(conn, record_id: str) -> str | None:
    """A record's ``conflicts_with`` column (a JSON list)."""
    row = conn.execute("SELECT conflicts_with FROM records WHERE id = ?", (record_id,)).fetchone()
    return row["conflicts_with"] if row else None


def set_conflicts_json(conn, record_id: str, conflicts: str) -> None:
    """Replace a record's ``conflicts_with`` column."""
    conn.execute("UPDATE records SET conflicts_with = ? WHERE id = ?", (conflicts, record_id))


def mark_entity_merged(conn, source_id: str, target_id: str) -> None:
    """Mark ``source_id`` merged into ``target_id``."""
    conn.execute("UPDATE entities SET status = 'merged', merged_into = ? WHERE id = ?", (target_id, source_id))


# -- maintenance ------------------------------------------------------------------------------------


def due_reviews(conn, now: str, batch: int) -> list[sqlite3.Row]:
    """``id, review_at, valid_until`` of up to ``batch`` live unflagged records whose review_at has passed."""
    return conn.execute(
        "SELECT id, review_at, valid_until FROM records WHERE review_at IS NOT NULL AND review_at <= ? "
        "AND review_flagged_at IS NULL AND status IN ('provisional','confirmed') ORDER BY review_at, seq LIMIT ?",
        (now, batch),
    ).fetchall()


def flag_for_review(conn, record_id: str, reason: str, now: str) -> int | None:
    """Flag a record for review unless it is flagged already; its seq, or None if nothing changed."""
    row = conn.execute(
        "UPDATE records SET review_flagged_at = ?, review_reason = ?, updated_at = ? "
        "WHERE id = ? AND review_flagged_at IS NULL RETURNING seq",
        (now, reason, now, record_id),
    ).fetchone()
    return row["seq"] if row is not None else None


def expire_lapsed_provisional(conn, now: str, batch: int) -> list[sqlite3.Row]:
    """Move up to ``batch`` provisional records past their expiry to ``expired``; ``id, seq, expires_at`` of each."""
    return conn.execute(
        "UPDATE records SET status = 'expired', updated_at = ? WHERE seq IN ("
        " SELECT seq FROM records WHERE status = 'provisional' AND expires_at IS NOT NULL AND expires_at <= ? "
        " ORDER BY expires_at, seq LIMIT ?) AND status = 'provisional' RETURNING id, seq, expires_at",
        (now, now, batch),
    ).fetchall()
