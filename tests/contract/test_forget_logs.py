"""A forget reaches every log that keeps the memory's words (issue 24, item 4). Both backends.

docs/store.md: a search-log row whose query repeats the text, or that returned the record, has
its query replaced by ``[forgotten]``, and the strings repeating it inside request and trace too.
The code only redacted a query holding the *whole* content, so "what should I call the user
Zorblax" (which returned the record) kept "Zorblax" in its raw query, request and trace (the
lexical terms, the matched terms of each candidate). The class: every column that keeps query
text or the record's words (rewritten query, empty reason, the request's context, replays, host
decisions' gap queries, other records' write-log comparisons, extraction attempts' errors).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_core import MemoryService
from memory_core.hostmem import HostMemory, decisions_for
from memory_core.store.db import loads
from memory_core.retrieve.search_log import decode_row
from tests.fakes import HashingEmbedder
from tests.unit.extract.helpers import FakeMessagesAPI

WORD = "zorblax"  # a word only the forgotten record (and the searches for it) hold


def _holds_word(service, table: str, word: str = WORD) -> list[str]:
    """The columns of ``table``'s rows (JSON and compressed columns decoded) that hold ``word``."""
    hits = []
    for row in service.store.query(f"SELECT * FROM {table}"):
        decoded = decode_row(service.store, row) if table == "search_log" else dict(row)
        for column, value in decoded.items():
            if isinstance(value, (bytes, bytearray)):  # a compressed JSON column, or an embedding blob
                value = loads(bytes(value)) if bytes(value[:2]) in (b"Z1", b"L4") else bytes(value).decode("latin-1")
            text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
            if word in text.casefold():
                hits.append(f"{table}.{column}")
    return hits


@pytest.fixture
def svc(target, clock, settings):
    rewriter = FakeMessagesAPI([{"query": "Zorblax nickname of the user"}] * 4)
    settings.retrieval.lexical_max_df_share = 1.0  # a tiny store: keep every query term
    service = MemoryService.open(target, settings, clock=clock, embedder=HashingEmbedder(), llm=rewriter.llm())
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    service.grant("assistant", "user:bob", read=True, write=True, actor="test")
    yield service
    service.close()


def test_a_search_that_returned_the_record_keeps_no_word_of_its_query_after_the_forget(svc):
    alice = svc.start_session(agent_id="assistant", user_id="alice")
    nick = alice.call_tool("memory_write", {"type": "semantic", "content": "The user wants to be called Zorblax.",
                                            "attribute": "nickname"})["record_id"]
    kept = alice.call_tool("memory_write", {"type": "semantic", "content": "The user lives in Lisbon near the river.",
                                            "attribute": "home"})["record_id"]
    asked = alice.call_tool("memory_search", {"query": "what should I call the user Zorblax"})
    assert nick in [r["id"] for r in asked["results"]]
    rewritten = svc.search(agent_id="assistant", user_id="alice", query="what name again?", rewrite=True,
                           context="user: call me Zorblax from now on\nassistant: sure")
    assert rewritten.explanation.rewritten_query and nick in rewritten.record_ids
    replay = svc.replay_search(asked["search_id"])
    # Another user's search that names the word but cannot reach the record is their own search: it stays.
    bob = svc.start_session(agent_id="assistant", user_id="bob")
    bob.call_tool("memory_write", {"type": "semantic", "content": "The user plays chess on Sundays.", "attribute": "hobby"})
    bobs = bob.call_tool("memory_search", {"query": "Zorblax chess opening"})
    assert bobs["ok"] and nick not in [r["id"] for r in bobs["results"]]
    other = alice.call_tool("memory_search", {"query": "Lisbon near the river"})
    assert [r["id"] for r in other["results"]][:1] == [kept]
    assert "search_log.raw_query" in _holds_word(svc, "search_log")  # the check can see it

    preview = svc.forget_preview(nick)
    assert {asked["search_id"], rewritten.search_id, replay.search_id} <= set(preview["search_log_rows"])
    assert bobs["search_id"] not in preview["search_log_rows"] and other["search_id"] not in preview["search_log_rows"]
    alice.call_tool("memory_forget", {"record_id": nick, "reason": "the user asked"})

    for search_id in (asked["search_id"], rewritten.search_id, replay.search_id):
        row = decode_row(svc.store, svc.store.query_one("SELECT * FROM search_log WHERE id = ?", (search_id,)))
        flat = json.dumps(row, default=str).casefold()
        assert WORD not in flat, search_id
        assert "call" not in flat.replace("called", "")  # the query's other words went with it
        assert row["raw_query"] == "[forgotten]"
        # the row still rebuilds: the record shows as deleted, the stages keep their names and times
        rebuilt = svc.load_search(search_id)
        assert [r.record.status for r in rebuilt.results if r.record and r.record.id == nick] == ["deleted"]
        assert [s.name for s in rebuilt.trace.stages][:2] == ["rewrite", "scope_resolution"]
    assert svc.store.scalar("SELECT rewritten_query FROM search_log WHERE id = ?", (rewritten.search_id,)) == "[forgotten]"
    assert _holds_word(svc, "search_log") == ["search_log.raw_query", "search_log.request", "search_log.trace"]  # bob's row only
    assert svc.store.scalar("SELECT raw_query FROM search_log WHERE id = ?", (bobs["search_id"],)) == "Zorblax chess opening"
    assert svc.store.scalar("SELECT raw_query FROM search_log WHERE id = ?", (other["search_id"],)) == "Lisbon near the river"
    for table in ("write_log", "events", "extraction_candidates", "host_memory_decisions", "session_context", "entities",
                  "entity_aliases", "records"):
        assert _holds_word(svc, table) == [], table


def test_a_write_compared_with_the_forgotten_record_loses_the_comparison_not_its_row(svc):
    alice = svc.start_session(agent_id="assistant", user_id="alice")
    first = alice.call_tool("memory_write", {"type": "semantic", "content": "The user's gate code is 5550143.",
                                             "attribute": "gate_code"})["record_id"]
    second = alice.call_tool("memory_write", {"type": "semantic", "content": "The user's gate code is 5550199.",
                                              "attribute": "gate_code"})
    assert second["superseded"] == [first]
    row = svc.store.query_one("SELECT validation FROM write_log WHERE record_id = ?", (second["record_id"],))
    assert "5550143" in row["validation"]  # the check can see the old value in the new record's row
    svc.forget(first, actor="user:alice", reason="forget the old code")
    row = svc.store.query_one("SELECT validation FROM write_log WHERE record_id = ?", (second["record_id"],))
    assert "5550143" not in row["validation"]
    comparisons = loads(row["validation"])["claim_comparisons"]
    assert [c["differences"] for c in comparisons if c["record_id"] == first] == [["[forgotten]"]]
    assert svc.record(second["record_id"]).content == "The user's gate code is 5550199."


def test_a_host_decision_whose_search_found_the_record_keeps_none_of_its_query(any_service):
    svc = any_service  # the offline gap rules (no model client)
    svc.grant("assistant", "user:alice", read=True, write=True, actor="test")
    diet = svc.write_system_fact(scope="user:alice", content="Alice is vegan: she eats no meat, fish, eggs or dairy.",
                                 attribute="diet", actor="test").record.id
    session = svc.start_session(agent_id="assistant", user_id="alice")
    text = "Can you suggest something I could cook for dinner tonight?"
    session.record_turn("user", text)
    decision = HostMemory(svc).decide(session, text)
    assert diet in decision.admitted_ids
    (row,) = decisions_for(svc, session.id)
    queries = [svc.store.scalar("SELECT raw_query FROM search_log WHERE id = ?", (s,)) for s in row["search_ids"]]
    found = [q for q, s in zip(queries, row["search_ids"])
             if diet in loads(svc.store.scalar("SELECT result_ids FROM search_log WHERE id = ?", (s,)))]
    assert found and all(q in json.dumps(row) for q in found)
    svc.forget(diet, actor="user:alice", reason="forget my diet")
    (row,) = decisions_for(svc, session.id)
    flat = json.dumps(row, ensure_ascii=False)
    assert all(q not in flat for q in found), flat
    assert "vegan" not in flat.casefold() and json.loads(row["message"])["ok"] is True


@pytest.mark.sqlite_only
def test_the_forgotten_query_leaves_the_sqlite_files(svc, backend):
    if backend != "sqlite":
        pytest.skip("the PostgreSQL files are checked after the erasure pass in test_pg_erasure.py")
    alice = svc.start_session(agent_id="assistant", user_id="alice")
    nick = alice.call_tool("memory_write", {"type": "semantic", "content": "The user wants to be called Zorblax.",
                                            "attribute": "nickname"})["record_id"]
    alice.call_tool("memory_search", {"query": "what should I call the user Zorblax"})
    path = Path(svc.store.path)

    def data() -> bytes:
        return b"".join(Path(str(path) + s).read_bytes() for s in ("", "-wal") if Path(str(path) + s).exists()).lower()

    assert WORD.encode() in data()
    svc.forget(nick, actor="user:alice", reason="asked")
    assert WORD.encode() not in data()
