"""The service behaves the same on both backends: write → search → get → revise → forget, scopes
as hard predicates, entity matching, the append-only event log, and identical scores."""

import sqlite3

import pytest

from memory_core import MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder
from tests.helpers import write


@pytest.fixture
def settings():
    # A tiny store: keep every query term (in five records every word is "common").
    return default_settings(retrieval={"lexical_max_df_share": 1.0})


def _search(session, query, **extra):
    result = session.call_tool("memory_search", {"query": query, **extra})
    assert result["ok"], result
    return result


def test_write_search_get_revise_forget(any_service):
    svc = any_service
    svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
    s = svc.start_session(agent_id="assistant", user_id="alice")
    rid = write(s, "The user's favourite Lisbon café is Fábrica Coffee Roasters.", attribute="favourite_cafe")
    found = _search(s, "favourite café Lisbon")
    assert [r["id"] for r in found["results"]] == [rid]
    got = s.call_tool("memory_get", {"record_id": rid})
    assert got["ok"] and got["record"]["content"].startswith("The user's favourite Lisbon café")
    revised = s.call_tool("memory_revise", {"action": "update", "record_id": rid, "reason": "moved",
                                            "content": "The user's favourite Lisbon café is now Hello Kristof."})
    assert revised["ok"], revised
    new_id = revised["record_id"]
    assert svc.record(rid).status == "superseded"
    found = _search(s, "favourite café Lisbon")
    assert [r["id"] for r in found["results"]] == [new_id]
    assert "Hello Kristof" in found["results"][0]["content"]
    forgotten = s.call_tool("memory_forget", {"record_id": new_id, "reason": "asked to"})
    assert forgotten["ok"], forgotten
    assert _search(s, "favourite café Lisbon")["results"] == []
    assert svc.record(new_id).status == "deleted" and "Kristof" not in (svc.record(new_id).content or "")
    assert s.call_tool("memory_get", {"record_id": new_id})["ok"] is False


def _world(svc, *, with_bob: bool):
    svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
    svc.grant("researcher", "user:bob", read=True, write=True, actor="t")
    a = svc.start_session(agent_id="assistant", user_id="alice")
    write(a, "The user loves sushi with Priya on Fridays.", attribute="food", mentions=["Priya"])
    write(a, "The user is allergic to peanuts.", attribute="allergy")
    write(a, "Priya recommended the ramen place near the office.", about="Priya", about_kind="person", attribute="tip")
    if with_bob:
        b = svc.start_session(agent_id="researcher", user_id="bob")
        for i in range(6):
            write(b, f"Bob's note {i}: sushi and Priya, peanuts and ramen, office lunches.", attribute=f"note_{i}", mentions=["Priya"])
    return a


QUERIES = ["what food does the user love with Priya", "peanuts allergy", "ramen near the office", "Priya", "sushi Fridays"]


def _answers(svc, session):
    out = []
    for query in QUERIES:
        response = svc.search(agent_id=session.agent_id, user_id=session.user_id, query=query)
        out.append([(svc.record(r.record_id).content, r.explanation.generators.get("dense", {}).get("cosine"),
                     r.explanation.generators.get("lexical", {}).get("lexical"),
                     bool(r.explanation.generators.get("entity"))) for r in response.results])
    return out


def test_records_a_principal_cannot_read_change_nothing_it_sees(backend, new_target, clock, settings):
    """Two stores that differ only in Bob's records give Alice's assistant identical answers and scores."""
    answers = []
    for with_bob in (False, True):
        svc = MemoryService.open(new_target(backend, f"{with_bob}.sqlite"), settings, clock=clock, embedder=HashingEmbedder())
        try:
            session = _world(svc, with_bob=with_bob)
            answers.append(_answers(svc, session))
            for query in QUERIES:
                for r in svc.search(agent_id="assistant", user_id="alice", query=query).results:
                    assert svc.record(r.record_id).scope_id == "alice"
        finally:
            svc.close()
    assert answers[0] == answers[1]
    assert any(answers[0])


def test_both_backends_give_the_same_results_and_scores(new_target, clock, settings):
    """Same writes, same answers: the lexical score (and so its floor) needs no recalibration."""
    answers = []
    for backend in ("sqlite", "postgresql"):
        svc = MemoryService.open(new_target(backend), settings, clock=clock, embedder=HashingEmbedder())
        try:
            answers.append(_answers(svc, _world(svc, with_bob=True)))
        finally:
            svc.close()
    assert answers[0] == answers[1]


def test_entity_matching_finds_records_linked_to_a_named_person(any_service):
    session = _world(any_service, with_bob=True)
    response = any_service.search(agent_id="assistant", user_id="alice", query="Priya")
    linked = [r for r in response.results if r.explanation.generators.get("entity")]
    assert linked and all(any_service.record(r.record_id).scope_id == "alice" for r in linked)
    assert session  # the session made the writes


def test_the_event_log_refuses_update_and_delete(any_service):
    _world(any_service, with_bob=False)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        with any_service.store.transaction() as conn:
            conn.execute("UPDATE events SET actor = 'mallory'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        with any_service.store.transaction() as conn:
            conn.execute("DELETE FROM events")
    if any_service.store.backend == "postgresql":
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            with any_service.store.transaction() as conn:
                conn.execute("TRUNCATE events")
    assert any_service.store.scalar("SELECT COUNT(*) FROM events WHERE actor = 'mallory'") == 0
    assert any_service.store.scalar("SELECT COUNT(*) FROM events") > 0


def test_a_record_outside_the_readable_scopes_is_never_a_candidate(any_service):
    _world(any_service, with_bob=True)
    response = any_service.search(agent_id="assistant", user_id="alice", query="Bob's note sushi Priya peanuts ramen")
    seen = set()
    for stage in response.trace.stages:
        for cand in (stage.outputs or {}).get("candidates", []) if isinstance(stage.outputs, dict) else []:
            seen.add(cand.get("id"))
    seen.discard(None)
    assert seen and all(any_service.record(i).scope_id == "alice" for i in seen)


def test_a_search_without_grants_finds_nothing(any_service):
    _world(any_service, with_bob=True)
    response = any_service.search(agent_id="stranger", user_id="alice", query="sushi Priya")
    assert response.results == []


def test_a_nul_character_is_refused_cleanly_on_postgresql_and_stored_on_sqlite(any_service, backend):
    any_service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    s = any_service.start_session(agent_id="assistant", user_id="alice")
    before = any_service.store.scalar("SELECT COUNT(*) FROM records")
    result = s.call_tool("memory_write", {"type": "semantic", "content": "The user's code is A\x00B."})
    if backend == "postgresql":
        assert result["ok"] is False and result["error"]["code"] == "invalid_input"
        assert any_service.store.scalar("SELECT COUNT(*) FROM records") == before
        assert s.call_tool("memory_write", {"type": "semantic", "content": "The user's code is AB."})["ok"]
    else:
        assert result["ok"]
