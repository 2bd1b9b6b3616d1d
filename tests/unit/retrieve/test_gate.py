"""The empty-result gate: exact reasons for an empty answer, and entity matches passing alone."""

from memory_core.retrieve.scoring import weak_signals_reason

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
    expected = weak_signals_reason(gate.outputs["best_cosine"], gate.outputs["best_bm25"],
                                   service.settings.retrieval.cosine_floor, service.settings.retrieval.bm25_floor)
    assert response.empty_reason == expected == response.explanation.empty_reason
    assert expected.startswith("best cosine ") and expected.endswith("; no lexical match; no entity match")
    assert len(gate.dropped) == 2 and all(d["reason"].startswith("gate: cosine ") for d in gate.dropped)
    assert [s.status for s in response.trace.stages[-5:]] == ["skipped", "skipped", "skipped", "ran", "ran"]
    assert response.explanation.summary == f"nothing returned: {expected}"


def test_a_principal_with_nothing_readable_gets_the_filter_reason(service, alice):
    write(alice, "The user lives in Lisbon.", attribute="home_city")
    response = service.search(agent_id="stranger", user_id="alice", query="where does the user live")
    assert response.empty_reason == (
        "no record in the readable scopes passes the hard filter "
        "(scopes agent:stranger/alice; status provisional/confirmed)"
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
    assert len(matches) == 1, matches  # the lexical stage's query, reused by the probe


def test_an_entity_match_passes_the_gate_on_its_own(make_service):
    service = make_service(cosine_floor=0.99, bm25_floor=1000.0)
    alice = _principal(service)
    about = write(alice, "Priya leads the Atlas migration.", about="Priya", about_kind="person", attribute="role")
    write(alice, "The user likes tea.", attribute="drink")
    response = search(service, alice, "anything new from priya?")
    assert response.record_ids == [about]
    explanation = response.results[0].explanation
    assert explanation.matched_by[-1] == "entity" and explanation.gate == "passed: exact entity match (Priya)"
    assert explanation.generators["entity"]["entities"][0]["name"] == "Priya"


def test_entity_hints_match_without_a_mention_in_the_query(make_service):
    service = make_service(cosine_floor=0.99, bm25_floor=1000.0)
    alice = _principal(service)
    about = write(alice, "Priya leads the Atlas migration.", about="Priya", about_kind="person", attribute="role")
    assert search(service, alice, "who leads the migration").empty
    hinted = search(service, alice, "who leads the migration", entity_hints=["PRIYA"])
    assert hinted.record_ids == [about]
    entity_id = service.record(about).subject_entity_id
    by_id = search(service, alice, "who leads the migration", entity_hints=[entity_id])
    assert by_id.record_ids == [about]


def test_entity_matches_are_ordered_by_recency(make_service, clock):
    service = make_service(cosine_floor=0.99, bm25_floor=1000.0)
    alice = _principal(service)
    first = write(alice, "Met Priya about hiring.", type="episodic", mentions=["Priya"], event_at="2026-01-01T10:00:00Z")
    second = write(alice, "Met Priya about the budget.", type="episodic", mentions=["Priya"], event_at="2026-02-01T10:00:00Z")
    response = search(service, alice, "Priya")
    entity = response.trace.stage("entity").outputs["candidates"]
    assert [c["id"] for c in entity] == [second, first]
