"""Migrations 60-69: store hardening (erasure on forget). Registered in :mod:`.migrations`.

These functions import nothing from the rest of the store package (the migration runner is
imported by ``db``, so anything it imports must stay below it), and a migration keeps its own
copy of any rule it applies: a later change of the live code must not change what it did.
"""

from __future__ import annotations

import sqlite3

# What a redacted audit-event reason becomes: this migration's own copy (live code takes it from
# ``store/markers.py``; a test keeps the two equal).
REDACTED_REASON = "[forgotten]"


def allow_event_redaction(conn: sqlite3.Connection) -> None:
    """Migration 60: the event log stays append-only except that a forget may replace an event's
    free-text reason (which can repeat the forgotten content, e.g. a revision's reason) with the
    redaction marker. Every other column must stay as it was."""
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute(
        f"""
        CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        WHEN NOT (NEW.seq = OLD.seq AND NEW.at = OLD.at AND NEW.kind = OLD.kind AND NEW.actor = OLD.actor
                  AND NEW.record_id IS OLD.record_id AND NEW.entity_id IS OLD.entity_id AND NEW.payload = OLD.payload
                  AND NEW.reason = '{REDACTED_REASON}')
        BEGIN
            SELECT RAISE(ABORT, 'the event log is append-only');
        END
        """
    )


def empty_tombstones_and_scope_fts(conn: sqlite3.Connection) -> None:
    """Migration 61: forgets by older code left a tombstone's attribute, subject and entity links
    (the attribute can name what was forgotten, e.g. "therapist_name"); and records linked to
    entities of another scope had those entities' names and aliases in their FTS row. Empty the
    former; re-index the latter with only their own scope's entity words."""
    conn.execute("UPDATE records SET attribute = NULL, subject = NULL, subject_entity_id = NULL WHERE status = 'deleted'")
    conn.execute("DELETE FROM record_entities WHERE record_id IN (SELECT id FROM records WHERE status = 'deleted')")
    crossed = conn.execute(
        "SELECT DISTINCT r.seq, r.id, r.content, r.attribute, r.subject_entity_id, r.scope_kind, r.scope_id FROM records r "
        "JOIN record_entities re ON re.record_id = r.id JOIN entities e ON e.id = re.entity_id "
        "WHERE r.status != 'deleted' AND (e.scope_kind != r.scope_kind OR e.scope_id != r.scope_id)"
    ).fetchall()
    for seq, record_id, content, attribute, subject_entity_id, scope_kind, scope_id in crossed:
        words = [row[0] for row in conn.execute(
            "SELECT canonical_name FROM entities WHERE id = ? AND scope_kind = ? AND scope_id = ?",
            (subject_entity_id, scope_kind, scope_id))]
        if attribute:
            words.append(attribute.replace("_", " "))
        aliases = [row[0] for row in conn.execute(
            "SELECT DISTINCT a.alias FROM record_entities re JOIN entity_aliases a ON a.entity_id = re.entity_id "
            "JOIN entities e ON e.id = re.entity_id WHERE re.record_id = ? AND e.scope_kind = ? AND e.scope_id = ? ORDER BY a.alias",
            (record_id, scope_kind, scope_id))]
        conn.execute("DELETE FROM records_fts WHERE rowid = ?", (seq,))
        conn.execute("INSERT INTO records_fts (rowid, content, subject, aliases) VALUES (?, ?, ?, ?)",
                     (seq, content, " ".join(words), " ".join(aliases)))


def records_by_source(conn: sqlite3.Connection) -> None:
    """Migration 62: records indexed by the session (or other source) they were written from, so a
    write finds the records its session already saved that state the same fact (docs/write-path.md,
    "The same fact twice") with one index lookup instead of a scan of the owner's records."""
    conn.execute("CREATE INDEX IF NOT EXISTS records_source ON records(source_ref, status)")
