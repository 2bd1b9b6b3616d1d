"""Migrations 60-69: store hardening (erasure on forget).

Registered by importing this module at the end of :mod:`memory_core.store.migrations`.
"""

from __future__ import annotations

import sqlite3

from .migrations import _script, migration

# What a redacted audit-event reason becomes. The event itself (kind, time, actor, record id)
# stays: forgetting erases the memory, not the fact that something was written and forgotten.
REDACTED_REASON = "[forgotten]"


@migration(60, "event reasons can be redacted when a record is forgotten")
def _m0060_event_redaction(conn: sqlite3.Connection) -> None:
    # The event log stays append-only except for one change: a forget may replace an event's
    # free-text reason (which can repeat the forgotten content, e.g. a revision's reason) with
    # the redaction marker. Every other column must stay as it was.
    _script(
        conn,
        f"""
        DROP TRIGGER events_no_update;
        CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        WHEN NOT (NEW.seq = OLD.seq AND NEW.at = OLD.at AND NEW.kind = OLD.kind AND NEW.actor = OLD.actor
                  AND NEW.record_id IS OLD.record_id AND NEW.entity_id IS OLD.entity_id AND NEW.payload = OLD.payload
                  AND NEW.reason = '{REDACTED_REASON}')
        BEGIN
            SELECT RAISE(ABORT, 'the event log is append-only');
        END;
        """,
    )


@migration(61, "tombstones hold no attribute or subject; FTS rows name only same-scope entities")
def _m0061_tombstones_and_fts_scopes(conn: sqlite3.Connection) -> None:
    # Forgets by older code left a tombstone's attribute, subject and entity links (the attribute
    # can name what was forgotten, e.g. "therapist_name"). And records linked to entities of
    # another scope had those entities' aliases in their FTS row; re-sync those rows under the
    # same-scope rule of fts_text_for.
    from .records import fts_sync

    conn.execute("UPDATE records SET attribute = NULL, subject = NULL, subject_entity_id = NULL WHERE status = 'deleted'")
    conn.execute("DELETE FROM record_entities WHERE record_id IN (SELECT id FROM records WHERE status = 'deleted')")
    crossed = conn.execute(
        "SELECT DISTINCT r.seq FROM records r JOIN record_entities re ON re.record_id = r.id JOIN entities e ON e.id = re.entity_id "
        "WHERE r.status != 'deleted' AND (e.scope_kind != r.scope_kind OR e.scope_id != r.scope_id)"
    ).fetchall()
    for row in crossed:
        fts_sync(conn, row[0])
