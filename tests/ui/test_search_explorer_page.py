"""Search explorer: the real pipeline as a principal, the empty reason first, stages one by one, replay."""

from tests.ui.conftest import frames_with, service_for


def run_search(at, agent: str, user: str, query: str):
    at.selectbox(key="explorer_agent").set_value(agent)
    at.selectbox(key="explorer_user").set_value(user)
    at.text_input(key="explorer_query").input(query)
    at.button(key="explorer_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at.session_state["explorer_response"]


def test_a_search_as_a_principal_returns_results_with_explanations(open_page):
    at = open_page("search_explorer.py", "viewer")
    response = run_search(at, "assistant", "alice", "detailed answers with examples")
    assert response.results, response.empty_reason
    assert response.request.agent_id == "assistant" and response.request.user_id == "alice"
    assert frames_with(at, "rank", "matched_by")[0]["id"].tolist() == response.record_ids
    at.selectbox(key="explorer_result").select(response.record_ids[0]).run()
    assert not at.exception
    assert any(j.value for j in at.json)


def test_an_empty_search_shows_its_reason_first(open_page):
    at = open_page("search_explorer.py", "viewer")
    response = run_search(at, "scheduler", "alice", "detailed answers with examples")
    assert response.empty
    # an empty answer is a normal outcome: a neutral box, not an error
    assert not at.error
    notes = [m.value for m in at.markdown if "No memory returned" in m.value]
    assert notes and ("agent\\:scheduler/alice" in notes[0] or "agent:scheduler/alice" in notes[0])


def test_the_stepper_walks_through_each_stage(open_page):
    at = open_page("search_explorer.py", "operator")
    response = run_search(at, "assistant", "alice", "Lisbon offsite")
    names = [s.name for s in response.trace.stages]
    seen = []
    for _ in names:
        panel = [t.value for t in at.text if t.value.startswith("Stage ")]
        seen.append(panel[0].split(": ", 1)[1].split(" · ")[0])
        at.button(key="explorer_next").click().run()
    assert seen == names
    at.button(key="explorer_prev").click().run()
    assert at.number_input(key="explorer_stage").value == len(names) - 1


def test_a_logged_search_reopens_and_replays(open_page):
    at = open_page("search_explorer.py", "operator")
    first = run_search(at, "assistant", "alice", "Lisbon offsite")
    at.text_input(key="explorer_search_id").input(first.search_id)
    at.button(key="explorer_open").click().run()
    opened = at.session_state["explorer_response"]
    assert opened.from_log and opened.search_id == first.search_id
    at.button(key="explorer_replay").click().run()
    replayed = at.session_state["explorer_response"]
    assert replayed.search_id != first.search_id and replayed.record_ids == first.record_ids


def test_view_as_principal_applies_exactly_the_agents_grants(open_page):
    at = open_page("search_explorer.py", "admin")
    response = run_search(at, "helper", "bob", "answer style Lisbon Sam manager")
    service = service_for(at)
    allowed = set(service.access("helper", "bob").readable)
    assert {r.record.scope for r in response.results} <= allowed
    assert set(response.explanation.scopes) == allowed


def test_the_gate_stage_shows_how_the_known_name_check_judged_a_named_question(open_page, monkeypatch):
    # one candidate per generator: the single record about Sam fills Sam's entity list, as a
    # speaker's hundreds of records do, so the known-name check judges the question
    monkeypatch.setenv("MEMORY_RETRIEVAL__CANDIDATES_PER_GENERATOR", "1")
    monkeypatch.setenv("MEMORY_RETRIEVAL__COSINE_FLOOR", "0.0")
    # a model that asks more of the rest of the question than any cosine gives: the check refuses
    monkeypatch.setenv("MEMORY_RETRIEVAL__NAME_MODEL_WEIGHTS", "[-5, 3, 0, 0, 0, 0, 0]")
    monkeypatch.setenv("MEMORY_RETRIEVAL__NAME_MODEL_FLOOR", "0.5")
    at = open_page("search_explorer.py", "operator")
    response = run_search(at, "assistant", "alice", "How does Sam like his coffee?")
    gate = response.trace.stage("gate").outputs
    assert gate["known_names"] == ["Sam"] and "name_model" in gate
    number = [s.name for s in response.trace.stages].index("gate") + 1
    at.number_input(key="explorer_stage").set_value(number).run()
    lines = [t.value for t in at.text]
    assert any(line.startswith("Gate decision: ") for line in lines)
    model = [line for line in lines if line.startswith("Known-name model for Sam: p ")]
    assert model and f"vs floor {gate['name_model']['floor']:g}" in model[0]
    assert response.empty and gate["name_model"]["probability"] < gate["name_model"]["floor"]
    assert response.empty_reason.startswith("mentions sam, but the rest of the question finds too little support")
    assert "(refuses)" in model[0]


def test_the_gate_stage_shows_the_short_list_rule_refusing_a_named_question(open_page, monkeypatch):
    # the one record about Sam is a short entity list; an entity-support floor of 0 lets the name alone
    # carry the set, so only the short-list rule (on by default) can refuse it
    monkeypatch.setenv("MEMORY_RETRIEVAL__ENTITY_SUPPORT_COSINE", "0.0")
    at = open_page("search_explorer.py", "operator")
    response = run_search(at, "assistant", "alice", "What is Sam's blood type?")
    gate = response.trace.stage("gate").outputs
    assert response.empty and gate["known_names_short"] is True
    assert response.empty_reason.startswith("mentions sam, but nothing about the rest of the question (")
    number = [s.name for s in response.trace.stages].index("gate") + 1
    at.number_input(key="explorer_stage").set_value(number).run()
    lines = [t.value for t in at.text]
    assert any(line.startswith("Short-list rule for Sam (a name linking few records needs the rest of the question): ")
               for line in lines)


def test_an_as_of_search_answers_the_value_held_then(open_page, ui_store):
    from datetime import date, time

    _path, ids = ui_store
    at = open_page("search_explorer.py", "viewer")
    at.date_input(key="explorer_as_of_date").set_value(date(2026, 3, 1))
    at.time_input(key="explorer_as_of_time").set_value(time(12, 0))
    then = run_search(at, "assistant", "alice", "answer style preference")
    assert then.request.as_of == "2026-03-01T12:00:00.000000Z" and then.request.as_of_mode == "memory"
    assert ids["concise"] in then.record_ids and ids["detailed"] not in then.record_ids
    assert "As of 2026-03-01T12:00:00.000000Z: what the memory held then" in [t.value for t in at.text]
    # the superseded version is shown as it was then: live
    row = frames_with(at, "rank", "status")[0].set_index("id").loc[ids["concise"]]
    assert row["status"] == "confirmed"
    # cleared, the same form searches the memory as it is now
    at.date_input(key="explorer_as_of_date").set_value(None)
    now = run_search(at, "assistant", "alice", "answer style preference")
    assert now.request.as_of is None and ids["concise"] not in now.record_ids


def test_an_as_of_search_in_the_future_is_refused_with_a_sentence(open_page):
    from datetime import date

    at = open_page("search_explorer.py", "viewer")
    at.date_input(key="explorer_as_of_date").set_value(date(2027, 1, 1))
    at.selectbox(key="explorer_agent").set_value("assistant")
    at.selectbox(key="explorer_user").set_value("alice")
    at.text_input(key="explorer_query").input("answer style")
    at.button(key="explorer_run").click().run()
    assert not at.exception
    assert any("future" in e.value for e in at.error), [e.value for e in at.error]
    assert "explorer_response" not in at.session_state
