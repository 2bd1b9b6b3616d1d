"""Issue 27, items 1-3: the filter stages say how many readable records they left and why; the
From/To window counts what it removed in its own stage; the extractor's searches have their own
origin and stay out of the agent-facing rates. Runs on both backends (``--store-backend``)."""

from __future__ import annotations

from admin_ui.data import logs, overview
from admin_ui.data import search as explorer
from tests.unit.extract.helpers import ScriptedReviewer, ended_session
from tests.unit.extract.test_runner import use

from .helpers import write


def _tool_text(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "search_id"}


def test_no_grant_says_how_many_readable_records_are_left_and_why(service, alice):
    write(alice, "The user lives in Lisbon.", attribute="home_city")
    response = service.search(agent_id="scheduler", user_id="alice", query="where does the user live")
    reason = ("0 readable records: agent scheduler has no read grant on user:alice; "
              "agent:scheduler/alice holds no provisional/confirmed record")
    assert response.empty_reason == reason
    hard = response.trace.stage("hard_filter")
    assert hard.outputs["readable_records"] == 0 and hard.notes[0] == reason
    assert response.explanation.filter["readable_records"] == 0
    # The explorer's button opens the hard filter, not the first generator that found nothing.
    number = explorer.dropping_stage(response)
    assert response.trace.stages[number - 1].name == "hard_filter"
    assert {r["stage"]: r["readable left"] for r in explorer.stage_rows(response)}["hard_filter"] == "0"


def test_the_models_text_does_not_depend_on_what_it_cannot_read(service, alice):
    scheduler = service.start_session(agent_id="scheduler", user_id="alice")
    first = _tool_text(scheduler.call_tool("memory_search", {"query": "Lisbon trip"}))
    for n in range(3):  # more records in user:alice, which the scheduler cannot read
        write(alice, f"The user is flying to Lisbon on trip {n}.", attribute=f"trip_{n}")
    second = _tool_text(scheduler.call_tool("memory_search", {"query": "Lisbon trip"}))
    assert first == second and first["results"] == []
    assert "Lisbon" not in str(second).replace("Lisbon trip", "")  # only the query itself
    assert "0 readable records: agent scheduler has no read grant on user:alice" in second["empty_reason"]


def test_a_readable_scope_emptied_by_the_type_does_not_blame_the_grants(service, alice):
    write(alice, "The user's editor is Emacs.", attribute="editor")
    response = service.search(agent_id="assistant", user_id="alice", query="which editor", types=["procedural"])
    assert response.empty_reason == ("0 readable records: agent:assistant/alice, user:alice hold no "
                                     "provisional/confirmed record of type procedural")


def test_the_time_window_counts_what_it_removed_and_the_reason_names_it(service, alice):
    write(alice, "Flew to Lagos for the conference.", type="episodic", event_at="2025-03-01T10:00:00Z")
    write(alice, "Walked the dog in the park.", type="episodic", event_at="2026-03-01T10:00:00Z")
    write(alice, "The user likes green tea.", attribute="drink")  # no event time: outside every window
    plain = service.search(agent_id="assistant", user_id="alice", query="quantum chromodynamics lattice")
    assert plain.trace.stage("time_window").status == "skipped"
    response = service.search(agent_id="assistant", user_id="alice", query="quantum chromodynamics lattice",
                              time_from="2026-01-01")
    window = response.trace.stage("time_window")
    assert window.status == "ran"
    assert window.outputs == {"readable_without_window": 3, "removed": 2, "readable_records": 1}
    assert response.empty_reason.startswith("the event-time window (from 2026-01-01T00:00:00.000000Z to any) removed "
                                            "2 readable record(s) before ranking")
    assert "of the rest, best cosine" in response.empty_reason
    assert explorer.window_stage(response) == (response.trace.stages.index(window) + 1, 2)


def test_a_window_that_removes_everything_is_the_stage_that_emptied_the_search(service, alice):
    write(alice, "Flew to Lagos for the conference.", type="episodic", event_at="2025-03-01T10:00:00Z")
    response = service.search(agent_id="assistant", user_id="alice", query="Lagos conference", time_to="2025-01-01")
    assert response.empty_reason == ("0 readable records: the event-time window (from any to 2025-01-01T23:59:59.999999Z) "
                                     "removed all 1 readable record(s)")
    assert response.trace.stages[explorer.dropping_stage(response) - 1].name == "time_window"


def test_extractions_searches_have_their_own_origin_and_stay_out_of_the_rates(service, alice):
    use(service, reviewer=ScriptedReviewer())
    alice.call_tool("memory_write", {"type": "semantic", "content": "The user lives in Lisbon.", "attribute": "home_location",
                                     "source_kind": "user_statement", "evidence": "I live in Lisbon."})
    service.search(agent_id="assistant", user_id="alice", query="zzzz qqqq unrelated")  # an agent's empty search
    _, run_id = ended_session(service, [("user", "Hello there, friend."), ("assistant", "Hi!"), ("user", "I live in Porto."),
                                        ("assistant", "Nice."), ("user", "Bye now, thanks.")])
    service.run_extraction(run_id)
    origins = [r["origin"] for r in service.store.query("SELECT origin FROM search_log ORDER BY seq")]
    assert "extraction" in origins and origins[0] is None
    agents = overview.empty_reasons_data(service)
    everyone = overview.empty_reasons_data(service, include_extraction=True)
    assert agents["searches"] == 1 and everyone["searches"] == len(origins) > 1
    assert sum(r["searches"] for r in overview.searches_per_day_data(service)) == 1
    assert sum(r["searches"] for r in overview.searches_per_day_data(service, include_extraction=True)) == len(origins)
    assert len(overview.search_latencies(service)) == 1
    # The Logs page shows whose search each row was.
    assert "extraction" in {r["origin"] for r in logs.search_log(service, logs.LogFilter()).items}
