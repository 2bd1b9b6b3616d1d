"""Round trips per operation on PostgreSQL, counted (they do not depend on the machine's load).

``PgConnection.statements`` counts what went to the server: one statement, or one pipelined batch
(``store/batching.py``, ``PgConnection.defer``). A host at 1 ms from its database pays about one
millisecond per round trip on top of the work, so these counts are the network budget of each
tool call (docs/scaling.md). The answers must be the same as when each statement went on its own:
the not-found answers of a get are checked on both backends.
"""

import pytest

from memory_core import FixedClock, MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder

GET_TRIPS = 1  # the agent's grants, the record, its entity links and its procedure, in one batch
WRITE_TRIPS = 7  # a new record without entities: grants; BEGIN + locks + duplicate count; dense; same-source rows;
#                  the record's insert; its full-text text; links, full-text row, write log, events, feed and COMMIT
SEARCH_TRIPS_ON_TOPIC = 9
SEARCH_TRIPS_OFF_TOPIC = 8
MATRIX_LOAD_TRIPS = 2  # a process's first search loads its dense-search matrix: the live count; the version and first rows


def _open(target):
    return MemoryService.open(target, default_settings(), clock=FixedClock("2026-03-05T10:00:00Z"),
                              embedder=HashingEmbedder())


def _write(session, content: str) -> str:
    result = session.call_tool("memory_write", {"type": "episodic", "target": "personal", "content": content})
    assert result.get("ok"), result
    return result["record_id"]


@pytest.fixture
def two_users(target):
    svc = _open(target)
    for user in ("alice", "bob"):
        svc.grant(f"agent_{user}", f"user:{user}", read=True, write=True, actor="t")
    alice = svc.start_session(agent_id="agent_alice", user_id="alice")
    bob = svc.start_session(agent_id="agent_bob", user_id="bob")
    ids = {"readable": _write(alice, "Alice shipped build 4.2 to staging on Monday."),
           "forgotten": _write(alice, "Alice keeps her spare keys under the blue flowerpot."),
           "unreadable": _write(bob, "Bob shipped build 7.1 to production on Friday."),
           "unknown": "rec_does_not_exist"}
    _write(alice, "Alice reviewed the release notes for build 4.2.")
    assert alice.call_tool("memory_forget", {"record_id": ids["forgotten"], "reason": "asked"})["ok"]
    yield svc, alice, ids
    svc.close()


def _trips(svc, call):
    before = svc.store.conn.statements
    result = call()
    return result, svc.store.conn.statements - before


def test_a_get_answers_readable_unreadable_forgotten_and_unknown_ids_as_before(two_users):
    """Both backends: the readable record with its content; the three others the same not-found
    answer, naming only the id asked for (nothing of an unreadable or forgotten record leaks)."""
    _, alice, ids = two_users
    got = alice.call_tool("memory_get", {"record_id": ids["readable"]})
    assert got["ok"] and got["record"]["id"] == ids["readable"]
    assert got["record"]["content"] == "Alice shipped build 4.2 to staging on Monday."
    for kind in ("unreadable", "forgotten", "unknown"):
        answer = alice.call_tool("memory_get", {"record_id": ids[kind]})
        assert answer == {"ok": False, "error": {"code": "not_found",
                                                 "message": f"no record {ids[kind]} is visible to this agent",
                                                 "details": {"record_id": ids[kind]}}}, (kind, answer)


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_get_is_one_round_trip_whatever_the_id(two_users):
    svc, alice, ids = two_users
    for kind, record_id in ids.items():
        _, trips = _trips(svc, lambda: alice.call_tool("memory_get", {"record_id": record_id}))
        assert trips == GET_TRIPS, (kind, trips)


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_write_and_a_search_stay_within_their_round_trips(two_users):
    svc, alice, _ = two_users
    found, trips = _trips(svc, lambda: alice.call_tool("memory_search", {"query": "which build did Alice ship to staging?"}))
    assert found["results"] and trips <= SEARCH_TRIPS_ON_TOPIC + MATRIX_LOAD_TRIPS, trips
    # from here the matrix is loaded: its catch-up after the write travels with the filter's count
    result, trips = _trips(svc, lambda: alice.call_tool("memory_write", {
        "type": "episodic", "target": "personal", "content": "Alice moved the staging deploy to Thursday."}))
    assert result["ok"] and result["outcome"] == "created", result
    assert trips <= WRITE_TRIPS, trips
    found, trips = _trips(svc, lambda: alice.call_tool("memory_search", {"query": "which build did Alice ship to staging?"}))
    assert found["results"], found
    assert trips <= SEARCH_TRIPS_ON_TOPIC, trips
    found, trips = _trips(svc, lambda: alice.call_tool("memory_search", {"query": "favourite colour of the evening sky"}))
    assert trips <= SEARCH_TRIPS_OFF_TOPIC, trips


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_deferred_statement_that_fails_rolls_its_transaction_back(target):
    """A statement queued with ``defer`` runs before the next one; its error is raised there, and
    nothing of the transaction (neither what came before nor the deferred rows) is committed."""
    import sqlite3

    svc = _open(target)
    try:
        store = svc.store
        with pytest.raises(sqlite3.IntegrityError), store.transaction() as conn:
            conn.execute("INSERT INTO store_meta (key, value) VALUES ('before', '1')")
            conn.defer("INSERT INTO store_meta (key, value) VALUES ('before', '2')")  # the same key: refused
            conn.defer("INSERT INTO store_meta (key, value) VALUES ('deferred', '1')")
            conn.execute("SELECT 1")
        assert store.scalar("SELECT COUNT(*) FROM store_meta WHERE key IN ('before', 'deferred')") == 0
        assert not conn.deferred
        with store.transaction() as conn:
            conn.defer("INSERT INTO store_meta (key, value) VALUES ('kept', '1')")
            mark = store.savepoint(conn, "sp")
            conn.defer("INSERT INTO store_meta (key, value) VALUES ('undone', '1')")
            store.rollback_to(conn, "sp", mark)
        assert {r[0] for r in store.query("SELECT key FROM store_meta WHERE key IN ('kept', 'undone')")} == {"kept"}
    finally:
        svc.close()
