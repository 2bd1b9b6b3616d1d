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
# A write: the grants (before the transaction); BEGIN + locks + the same-fact read + the first decision
# read; then what each kind of write must wait for; then the deferred rows, the events, the feed and COMMIT.
WRITE_TRIPS = {
    # + dense neighbours (with their rows); the queued insert with the read of its full-text text and seq
    "a new record": 5,
    # + dense neighbours (with their rows); the queued update with the reinforced record's read
    "the same words again": 5,
    # + the entity, its alias, the record and its link queued, sent with the full-text read
    "a new person": 4,
    # + the subject's live records and their cosines together; the update with the record's read
    "the same claim again": 5,
    # + the subject's records and cosines; the insert, link and full-text read (the old version's update queued)
    "a new value of the claim": 5,
    # + the second mention's lookup (the first's rows queued with it); the count; dense; insert with full-text read
    "two new mentions": 7,
}
SEARCH_TRIPS_ON_TOPIC = 8
SEARCH_TRIPS_OFF_TOPIC = 8
MATRIX_LOAD_TRIPS = 2  # a process's first search loads its dense-search matrix: the live count; the version and first rows
WRITES = {
    "a new record": {"type": "episodic", "content": "Alice moved the staging deploy to Thursday."},
    "the same words again": {"type": "episodic", "content": "Alice moved the staging deploy to Thursday."},
    "a new person": {"type": "semantic", "content": "Bob works on the billing team.", "about": "Bob",
                     "about_kind": "person", "attribute": "team"},
    "the same claim again": {"type": "semantic", "content": "Bob works on the billing team.", "about": "Bob",
                             "about_kind": "person", "attribute": "team"},
    "a new value of the claim": {"type": "semantic", "content": "Bob works on the payments team.", "about": "Bob",
                                 "about_kind": "person", "attribute": "team"},
    "two new mentions": {"type": "episodic", "content": "Alice met Carol and Dan at the offsite.",
                         "mentions": ["Carol", "Dan"]},
}
OUTCOMES = {"a new record": "created", "the same words again": "reinforced", "a new person": "created",
            "the same claim again": "reinforced", "a new value of the claim": "created", "two new mentions": "created"}

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
def test_each_kind_of_write_takes_its_round_trips(two_users):
    """Exact counts, in this order (each write sees the ones before it), so a regression fails."""
    svc, alice, _ = two_users
    counted = {}
    for kind, args in WRITES.items():
        result, counted[kind] = _trips(svc, lambda: alice.call_tool("memory_write", {"target": "personal", **args}))
        assert result["ok"] and result["outcome"] == OUTCOMES[kind], (kind, result)
    assert counted == WRITE_TRIPS


def test_the_batched_writes_leave_what_they_left_before(two_users):
    """Both backends: the same writes end in the same records, links, full-text matches and events."""
    svc, alice, _ = two_users
    for args in WRITES.values():
        assert alice.call_tool("memory_write", {"target": "personal", **args})["ok"]
    store = svc.store
    rows = store.query("SELECT r.content, r.status, r.observations, r.version, e.canonical_name, re.role FROM records r "
                       "LEFT JOIN record_entities re ON re.record_id = r.id LEFT JOIN entities e ON e.id = re.entity_id "
                       "WHERE r.scope_id = 'alice' AND (r.content LIKE '%Bob%' OR r.content LIKE '%Carol%' OR r.content LIKE '%staging deploy%') "
                       "ORDER BY r.seq, e.canonical_name")
    assert [tuple(r) for r in rows] == [
        ("Alice moved the staging deploy to Thursday.", "provisional", 1, 1, None, None),
        ("Bob works on the billing team.", "superseded", 1, 1, "Bob", "subject"),
        ("Bob works on the payments team.", "provisional", 1, 2, "Bob", "subject"),
        ("Alice met Carol and Dan at the offsite.", "provisional", 1, 1, "Carol", "mention"),
        ("Alice met Carol and Dan at the offsite.", "provisional", 1, 1, "Dan", "mention"),
    ]
    found = alice.call_tool("memory_search", {"query": "Carol offsite"})
    assert [r["content"] for r in found["results"]][:1] == ["Alice met Carol and Dan at the offsite."]
    kinds = [r[0] for r in store.query("SELECT kind FROM events WHERE kind LIKE 'record.%' ORDER BY seq")]
    assert kinds[-7:] == ["record.created", "record.reinforced", "record.created", "record.reinforced",
                          "record.created", "record.superseded", "record.created"]


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_search_stays_within_its_round_trips(two_users):
    svc, alice, _ = two_users
    # a process's first search loads its dense-search matrix (postgres.dense_search "matrix")
    found, trips = _trips(svc, lambda: alice.call_tool("memory_search", {"query": "which build did Alice ship to staging?"}))
    assert found["results"] and trips == SEARCH_TRIPS_ON_TOPIC + MATRIX_LOAD_TRIPS, trips
    # from here it is loaded: its catch-up after a write travels with the hard filter's count
    _write(alice, "Alice moved the staging deploy to Thursday.")
    found, trips = _trips(svc, lambda: alice.call_tool("memory_search", {"query": "which build did Alice ship to staging?"}))
    assert found["results"], found
    assert trips == SEARCH_TRIPS_ON_TOPIC, trips
    found, trips = _trips(svc, lambda: alice.call_tool("memory_search", {"query": "favourite colour of the evening sky"}))
    assert trips == SEARCH_TRIPS_OFF_TOPIC, trips


_TABLES = ("records", "entities", "entity_aliases", "record_entities", "records_fts", "events", "index_changes", "write_log")


def _counts(store) -> dict:
    counts = {table: store.scalar(f"SELECT COUNT(*) FROM {table}") for table in _TABLES}
    counts["records_version"] = store.get_meta("records_version")
    return counts


@pytest.mark.parametrize("backend", ["postgresql"])
@pytest.mark.parametrize("refused", [
    # an alias row: deferred, it fails on the server with the full-text read the insert travels with
    "ALTER TABLE entity_aliases ADD CONSTRAINT refuse_mallory CHECK (alias_norm <> 'mallory') NOT VALID",
    # the write-log row: deferred to the COMMIT's batch, it fails there
    "ALTER TABLE write_log ADD CONSTRAINT refuse_created CHECK (outcome <> 'created') NOT VALID",
])
def test_a_write_whose_deferred_statement_fails_leaves_nothing(target, refused):
    """A real constraint violation in a deferred statement of a memory_write: the write fails, and
    nothing of it (entity, alias, record, link, full-text row, events, change feed, log row) is left;
    the next write works (nothing queued leaks into its transaction)."""
    svc = _open(target)
    try:
        svc.grant("agent_alice", "user:alice", read=True, write=True, actor="t")
        alice = svc.start_session(agent_id="agent_alice", user_id="alice")
        _write(alice, "Alice shipped build 4.2 to staging on Monday.")
        svc.store.conn.execute_native(refused)
        before = _counts(svc.store)
        result = alice.call_tool("memory_write", {"type": "semantic", "target": "personal", "about": "Mallory",
                                                  "about_kind": "person", "attribute": "role",
                                                  "content": "Mallory is the new release manager."})
        assert not result.get("ok"), result
        assert _counts(svc.store) == before
        assert svc.store.scalar("SELECT COUNT(*) FROM records WHERE content LIKE '%Mallory%'") == 0
        assert not svc.store.conn.deferred
        svc.store.conn.execute_native(f"ALTER TABLE {refused.split()[2]} DROP CONSTRAINT {refused.split()[5]}")
        assert alice.call_tool("memory_write", {"type": "episodic", "target": "personal",
                                                "content": "Alice tagged build 4.3."})["ok"]
        assert svc.store.scalar("SELECT COUNT(*) FROM entities WHERE canonical_name = 'Mallory'") == 0
    finally:
        svc.close()


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
