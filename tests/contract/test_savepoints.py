"""A savepoint undoes its part of a transaction on both backends, including what PostgreSQL queues.

On PostgreSQL a transaction's event rows and change-feed rows are queued and sent with its COMMIT
(one round trip fewer each). A savepoint rolled back must drop the ones queued after it, as SQLite's
ROLLBACK TO drops the rows themselves; otherwise a candidate an extraction attempt undid, or a
refused record of a ``write_many`` batch, would still leave its events and feed rows behind.
"""

from __future__ import annotations

import pytest

AT = "2026-03-05T10:00:00.000000Z"


def _reasons(store) -> list[str]:
    with store.lock:
        return [r["reason"] for r in store.conn.execute("SELECT reason FROM events WHERE kind = 'test.note' ORDER BY seq")]


def _feed(store) -> list[int]:
    with store.lock:
        return [r["record_seq"] for r in store.conn.execute("SELECT record_seq FROM index_changes ORDER BY version")]


def _note(store, conn, reason: str) -> None:
    store.append_event(conn, at=AT, kind="test.note", actor="test", reason=reason)


def test_a_rolled_back_savepoint_drops_its_events_and_feed_rows_and_keeps_the_rest(any_service):
    store = any_service.store
    feed_before = _feed(store)
    with store.transaction() as conn:
        _note(store, conn, "before")
        store.bump(conn, 1_000_001)
        store.savepoint(conn, "kept_part")
        _note(store, conn, "kept")
        store.bump(conn, 1_000_002)
        store.release(conn, "kept_part")
        undone = store.savepoint(conn, "undone_part")
        _note(store, conn, "undone")
        store.bump(conn, 1_000_003)
        store.rollback_to(conn, "undone_part", undone)
        _note(store, conn, "after")
        store.bump(conn, 1_000_004)
    assert _reasons(store) == ["before", "kept", "after"]
    assert _feed(store)[len(feed_before):] == [1_000_001, 1_000_002, 1_000_004]


def test_a_savepoint_name_that_is_not_a_plain_word_is_refused_before_any_sql(any_service):
    store = any_service.store
    with pytest.raises(ValueError), store.transaction() as conn:
        store.savepoint(conn, "x; DROP TABLE events")
    assert _reasons(store) == []  # (the events table is still there: reading it does not raise)
