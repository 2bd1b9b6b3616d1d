"""A traced search: one trace, a ``search_memory`` span, one child span per pipeline stage.

Each stage span's numbers must be the ones the stage recorded in the search's own trace (the
explanation the search log keeps), not a second measurement.
"""

from __future__ import annotations

from memory_core.retrieve.retriever import default_stages
from tests.helpers import write

STAGES = [stage.name for stage in default_stages()]


def _bikes(session) -> None:
    for text in ("The user's bike is a green Brompton.", "The user rides the bike to work on Mondays.",
                 "The user's old bike was a red racing bike.", "The user keeps the bike in the hallway."):
        write(session, text)


def test_a_search_is_one_trace_with_a_span_per_stage_in_pipeline_order(traced):
    session = traced.service.start_session(agent_id="assistant", user_id="alice")
    _bikes(session)
    traced.exporter.clear()

    response = traced.service.search(agent_id="assistant", user_id="alice", query="which bike does the user ride")

    search = traced.one("search_memory")
    assert search.parent is None  # a host's search (no tool call around it) is the root of its trace
    stages = traced.children(search)
    assert [s.attributes["agent_memory.stage.name"] for s in sorted(stages, key=lambda s: s.start_time)] == STAGES
    assert [s.name for s in stages] == [f"search_stage {name}" for name in STAGES]  # each ended before the next began
    assert {s.context.trace_id for s in traced.spans()} == {search.context.trace_id}
    assert search.attributes["gen_ai.operation.name"] == "search_memory"
    assert search.attributes["agent_memory.search.id"] == response.search_id
    assert search.attributes["gen_ai.memory.record.count"] == len(response.results) > 0
    assert search.attributes["agent_memory.search.total_ms"] == response.total_ms
    # each stage span carries what the stage recorded in the response's trace: status, time, counts
    by_name = {s.attributes["agent_memory.stage.name"]: s for s in stages}
    for recorded in response.trace.stages:
        attributes = by_name[recorded.name].attributes
        assert attributes["agent_memory.stage.status"] == recorded.status
        assert attributes["agent_memory.stage.dropped"] == len(recorded.dropped)
        if recorded.name != "log_write":  # (its time is rewritten afterwards to the one the log row holds)
            assert attributes["agent_memory.stage.ms"] == recorded.ms
        for key, value in recorded.outputs.items():
            if recorded.name == "query_embedding" and key in ("embedding_ms", "waited_ms", "waited_in"):
                continue  # written later, by the stage that waited for the vector: they are on the search span
            if isinstance(value, list):
                assert attributes[f"agent_memory.stage.output.{key}.count"] == len(value)
            elif isinstance(value, bool | int | float):
                assert attributes[f"agent_memory.stage.output.{key}"] == value
    assert by_name["lexical"].attributes["agent_memory.stage.output.candidates.count"] == 4
    embedding = next(t for t in response.trace.stages if t.name == "query_embedding").outputs
    if "embedding_ms" in embedding:  # (embedded on a worker thread, not taken from the cache)
        assert search.attributes["agent_memory.search.embedding_ms"] == embedding["embedding_ms"]
    for span in stages:
        assert span.start_time >= search.start_time and span.end_time <= search.end_time


def test_drops_are_counted_on_the_stage_that_dropped_them(traced):
    session = traced.service.start_session(agent_id="assistant", user_id="alice")
    _bikes(session)
    traced.exporter.clear()

    response = traced.service.search(agent_id="assistant", user_id="alice", query="the user's bike", limit=1)

    search = traced.one("search_memory")
    dropped = {t.name: len(t.dropped) for t in response.trace.stages if t.dropped}
    assert dropped and sum(dropped.values()) == search.attributes["agent_memory.search.dropped"] >= 3
    for span in traced.children(search):
        name = span.attributes["agent_memory.stage.name"]
        assert span.attributes["agent_memory.stage.dropped"] == dropped.get(name, 0)
    assert search.attributes["gen_ai.memory.record.count"] == 1


def test_an_empty_search_shows_where_it_stopped_and_the_skipped_stages(traced):
    traced.service.search(agent_id="nobody", user_id="bob", query="anything at all")  # no grant: no readable scope

    search = traced.one("search_memory")
    assert search.attributes["agent_memory.search.empty"] is True
    assert search.attributes["gen_ai.memory.record.count"] == 0
    # the agent's own private scope is readable, but holds nothing: the gate ends the search
    assert search.attributes["agent_memory.search.halted_at"] == "gate"
    stages = {s.attributes["agent_memory.stage.name"]: s.attributes for s in traced.children(search)}
    assert len(stages) == len(STAGES)
    assert [name for name, a in stages.items() if a["agent_memory.stage.ended_search"]] == ["gate"]
    assert stages["collapse"]["agent_memory.stage.status"] == stages["budget"]["agent_memory.stage.status"] == "skipped"
    assert stages["explain"]["agent_memory.stage.status"] == stages["log_write"]["agent_memory.stage.status"] == "ran"


def test_a_tool_search_nests_under_its_tool_call_span(traced):
    session = traced.service.start_session(agent_id="assistant", user_id="alice")
    _bikes(session)
    traced.exporter.clear()

    result = session.call_tool("memory_search", {"query": "which bike does the user ride"})

    tool = traced.one("execute_tool memory_search")
    search = traced.one("search_memory")
    assert search.parent.span_id == tool.context.span_id and tool.parent is None
    assert tool.attributes["gen_ai.tool.name"] == "memory_search"
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.conversation.id"] == session.id == search.attributes["gen_ai.conversation.id"]
    assert tool.attributes["agent_memory.tool.ok"] is True
    assert tool.attributes["gen_ai.memory.record.count"] == len(result["results"])
    assert search.attributes["agent_memory.search.origin"] == "model"
    assert len(traced.children(search)) == len(STAGES)


def test_a_replayed_search_is_its_own_trace_marked_as_a_replay(traced):
    session = traced.service.start_session(agent_id="assistant", user_id="alice")
    _bikes(session)
    first = traced.service.search(agent_id="assistant", user_id="alice", query="the user's bike")
    traced.exporter.clear()

    again = traced.service.replay_search(first.search_id)

    search = traced.one("search_memory")
    assert search.attributes["agent_memory.search.replay"] is True
    assert search.attributes["agent_memory.search.id"] == again.search_id != first.search_id
    assert search.attributes["agent_memory.search.origin"] == "admin"


def test_a_search_that_fails_in_a_stage_marks_that_stage_and_the_search_failed(traced, monkeypatch):
    from memory_core.errors import StoreUnusableError
    from memory_core.retrieve.generate import LexicalStage

    def broken(self, given, rec, deps):
        raise StoreUnusableError("the postings could not be read for 'which bike'", path="x", problem="damaged")

    monkeypatch.setattr(LexicalStage, "run", broken)
    session = traced.service.start_session(agent_id="assistant", user_id="alice")
    result = session.call_tool("memory_search", {"query": "which bike"})

    assert result["ok"] is False
    lexical, search = traced.one("search_stage lexical"), traced.one("search_memory")
    for span in (lexical, search):
        assert span.status.status_code.name == "ERROR"
        assert span.status.description == "store_unusable" == span.attributes["error.type"]
    assert not span.events  # no exception event: its message could quote the query
