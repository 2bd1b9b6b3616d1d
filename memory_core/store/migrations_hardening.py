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
