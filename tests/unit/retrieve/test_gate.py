"""The empty-result gate, judged on the result set: exact reasons for an empty answer, and an entity
match that lets results through only with support for the rest of the question."""

import pytest

from memory_core.retrieve.gate.reasons import weak_reason
from memory_core.retrieve.gate.rules import Evidence, GateFloors

from .helpers import search, write


def _principal(service, user="alice"):
    service.grant("assistant", f"user:{user}", read=True, write=True, actor="t")
    return service.start_session(agent_id="assistant", user_id=user)


def test_weak_candidates_give_the_best_scores_against_the_floors(service, alice):
    write(alice, "The user prefers concise technical answers.", attribute="answer_style")
    write(alice, "The user lives in Lisbon.", attribute="home_city")
    response = search(service, alice, "quantum chromodynamics on a lattice")
    assert response.empty and response.results == []
    gate = response.trace.stage("gate")
    expected = weak_reason(Evidence(gate.outputs["best_cosine"], gate.outputs["best_lexical"]), GateFloors.of(service.settings.retrieval))
    assert response.empty_reason == expected == response.explanation.empty_reason
    assert expected.startswith("best cosine ") and expected.endswith("; no lexical match; no entity match")
    assert len(gate.dropped) == 2 and all(d["reason"] == f"gate: {expected}" for d in gate.dropped)
    assert gate.outputs["passed"] is False and gate.outputs["decision"] == f"empty: {expected}"
    assert [s.status for s in response.trace.stages[-5:]] == ["skipped", "skipped", "skipped", "ran", "ran"]
    assert response.explanation.summary == f"nothing returned: {expected}"


def test_a_principal_with_nothing_readable_gets_the_filter_reason(service, alice):
    write(alice, "The user lives in Lisbon.", attribute="home_city")
    response = service.search(agent_id="stranger", user_id="alice", query="where does the user live")
    assert response.empty_reason == (
        "0 readable records: agent stranger has no read grant on user:alice; "
        "agent:stranger/alice holds no provisional/confirmed record"
    )


def test_only_superseded_matches_say_so(make_service):
    service = make_service(cosine_floor=0.5)
    alice = _principal(service)
    old = write(alice, "The user's favourite editor is Emacs.", attribute="editor")
    write(alice, "The user switched tools last year.", attribute="editor")
    assert service.record(old).status == "superseded"
    response = search(service, alice, "favourite editor Emacs")
    assert response.empty
    assert response.empty_reason == "all 1 candidates filtered as superseded (1 superseded); historical search includes them"
    assert response.explanation.gate["lifecycle_probe"]["ids"] == [old]
    assert search(service, alice, "favourite editor Emacs", historical=True).record_ids[0] == old


@pytest.mark.sqlite_only
def test_the_empty_answer_is_explained_without_running_fts_again(make_service):
    service = make_service(cosine_floor=0.5)
    alice = _principal(service)
    old = write(alice, "The user's favourite editor is Emacs.", attribute="editor")
    write(alice, "The user switched tools last year.", attribute="editor")
    statements: list[str] = []
    service.store.conn.set_trace_callback(statements.append)
    try:
        response = search(service, alice, "favourite editor Emacs")
    finally:
        service.store.conn.set_trace_callback(None)
    assert response.explanation.gate["lifecycle_probe"]["ids"] == [old]
    matches = [sql for sql in statements if "MATCH" in sql and not sql.startswith("--")]  # "--": FTS5 internals
    assert len(matches) == 3, matches  # one doclist per query term, read by the lexical stage and reused by the probe


def test_an_entity_match_with_support_lets_the_result_set_through(make_service):
    service = make_service(cosine_floor=0.99, lexical_floor=0.95, entity_support_cosine=0.99, entity_support_lexical=0.15)
    alice = _principal(service)
    about = write(alice, "Priya leads the Atlas migration.", about="Priya", about_kind="person", attribute="role")
    tea = write(alice, "The user likes tea.", attribute="drink")
    response = search(service, alice, "does priya lead the migration?")
    assert response.record_ids[0] == about and tea in response.record_ids  # the set passes; the order is the fusion's
    explanation = response.results[0].explanation
    assert "entity" in explanation.matched_by
    gate = response.trace.stage("gate").outputs
    assert gate["best_lexical"] < 0.95 and gate["best_entity_rest_lexical"] >= 0.15
    support = f"entity match (Priya) supported by the rest of the question: lexical {gate['best_entity_rest_lexical']:.2f} >= 0.15"
    assert explanation.gate == f"passed: the result set passes on {about} ({support}); this record: {support}"
    assert response.results[1].explanation.gate.startswith(f"passed: the result set passes on {about} (")
    assert "this record alone is weak (" in response.results[1].explanation.gate
    assert explanation.generators["entity"]["entities"][0]["name"] == "Priya"


def test_a_name_alone_is_not_relevance(make_service):
    """'How does Priya like her answers formatted?': Priya is known, formatting was never stored."""
    service = make_service(cosine_floor=0.99, lexical_floor=0.9, entity_support_cosine=0.99, entity_support_lexical=0.3)
    alice = _principal(service)
    write(alice, "Priya leads the Atlas migration.", about="Priya", about_kind="person", attribute="role")
    write(alice, "Priya seems to prefer morning meetings.", about="Priya", about_kind="person", attribute="meetings")
    response = search(service, alice, "How does Priya like her answers formatted?")
    assert response.empty and response.results == []
    reason = response.empty_reason
    assert "entity match (Priya) without support for the rest of the question" in reason
    assert "rest of the question lexical 0.00 < 0.30" in reason
    assert response.explanation.gate["best_entity_rest_lexical"] == 0.0


def test_entity_hints_match_without_a_mention_in_the_query(make_service):
    service = make_service(cosine_floor=0.99, lexical_floor=1.0, entity_support_cosine=1.0, entity_support_lexical=0.25)
    alice = _principal(service)
    about = write(alice, "Priya leads the Atlas migration.", about="Priya", about_kind="person", attribute="role")
    assert search(service, alice, "who leads the migration effort").empty
    hinted = search(service, alice, "who leads the migration effort", entity_hints=["PRIYA"])
    assert hinted.record_ids == [about]
    entity_id = service.record(about).subject_entity_id
    by_id = search(service, alice, "who leads the migration effort", entity_hints=[entity_id])
    assert by_id.record_ids == [about]


def test_entity_matches_are_ordered_by_recency(make_service, clock):
    service = make_service(cosine_floor=0.99, lexical_floor=1.0)
    alice = _principal(service)
    first = write(alice, "Met Priya about hiring.", type="episodic", mentions=["Priya"], event_at="2026-01-01T10:00:00Z")
    second = write(alice, "Met Priya about the budget.", type="episodic", mentions=["Priya"], event_at="2026-02-01T10:00:00Z")
    response = search(service, alice, "Priya")
    entity = response.trace.stage("entity").outputs["candidates"]
    assert [c["id"] for c in entity] == [second, first]


def test_a_query_naming_only_unknown_names_needs_the_higher_cosine_floor(make_service):
    service = make_service(cosine_floor=0.1, cosine_floor_unknown_name=0.99, lexical_floor=1.0)
    alice = _principal(service)
    write(alice, "The user researched adoption agencies last spring.", attribute="research")
    response = search(service, alice, "What did Caroline research last spring?")
    gate = response.trace.stage("gate").outputs
    assert response.empty and gate["unknown_names"] == ["Caroline"]
    assert "for a query naming Caroline, which no readable record holds" in response.empty_reason
    known = search(service, alice, "What did the user research last spring?")  # no names: the ordinary floor
    assert not known.empty and known.trace.stage("gate").outputs["unknown_names"] == []


def test_a_known_name_in_the_query_keeps_the_ordinary_floor(make_service):
    service = make_service(cosine_floor=0.1, cosine_floor_unknown_name=0.99, lexical_floor=1.0)
    alice = _principal(service)
    write(alice, "The user moved from Porto to Lisbon.", attribute="home")
    response = search(service, alice, "Did the user live in Madrid or Lisbon?")  # Lisbon is held, Madrid is not
    assert not response.empty and response.trace.stage("gate").outputs["unknown_names"] == []
