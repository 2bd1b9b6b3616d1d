"""Spans of writes, revisions, forgets, gets, refusals and extraction attempts."""

from __future__ import annotations

from tests.helpers import write
from tests.unit.extract.helpers import ended_session


def _status(span) -> tuple[str, str | None]:
    return span.status.status_code.name, span.status.description


def test_a_write_is_an_upsert_span_under_its_tool_call_with_the_write_stages(traced):
    session = traced.service.start_session(agent_id="assistant", user_id="alice")
    result = session.call_tool("memory_write", {"type": "semantic", "content": "The user's bike is a green Brompton.",
                                                "attribute": "bike"})

    tool, upsert = traced.one("execute_tool memory_write"), traced.one("upsert_memory")
    assert upsert.parent.span_id == tool.context.span_id
    assert upsert.attributes["gen_ai.operation.name"] == "upsert_memory"
    assert upsert.attributes["gen_ai.memory.record.id"] == result["record_id"] == tool.attributes["gen_ai.memory.record.id"]
    assert upsert.attributes["agent_memory.write.outcome"] == "created"
    assert upsert.attributes["agent_memory.record.status"] == result["status"]
    assert upsert.attributes["agent_memory.scope.kind"] == "user"
    row = traced.service.store.query_one("SELECT stages, total_ms FROM write_log WHERE record_id = ?", (result["record_id"],))
    import json

    stages = json.loads(row["stages"])
    assert stages and {f"agent_memory.write.stage.{k}.ms": v for k, v in stages.items()} == {
        k: v for k, v in upsert.attributes.items() if k.startswith("agent_memory.write.stage.")}
    assert upsert.attributes["agent_memory.write.total_ms"] == row["total_ms"]


def test_the_same_write_again_is_a_reinforcement_and_a_revision_is_an_update_span(traced):
    session = traced.service.start_session(agent_id="assistant", user_id="alice")
    record_id = write(session, "The user's bike is a green Brompton.", attribute="bike")
    again = session.call_tool("memory_write", {"type": "semantic", "content": "The user's bike is a green Brompton.",
                                               "attribute": "bike"})
    assert again["outcome"] == "reinforced"
    traced.exporter.clear()

    revised = session.call_tool("memory_revise", {"action": "update", "record_id": record_id, "reason": "the user corrected it",
                                                  "content": "The user's bike is a blue Brompton."})

    assert revised["ok"], revised
    update = traced.one("update_memory")
    assert update.attributes["agent_memory.write.revises"] == record_id
    assert update.attributes["gen_ai.memory.record.id"] == revised["record_id"] != record_id
    assert traced.one("execute_tool memory_revise").attributes["agent_memory.tool.ok"] is True


def test_a_forget_is_a_delete_span_counting_what_went(traced):
    session = traced.service.start_session(agent_id="assistant", user_id="alice")
    record_id = write(session, "The user's bike is a green Brompton.")
    session.call_tool("memory_search", {"query": "the user's bike"})
    traced.exporter.clear()

    result = session.call_tool("memory_forget", {"record_id": record_id, "reason": "the user asked"})

    assert result["ok"], result
    delete = traced.one("delete_memory")
    assert delete.parent.span_id == traced.one("execute_tool memory_forget").context.span_id
    assert delete.attributes["gen_ai.operation.name"] == "delete_memory"
    assert delete.attributes["gen_ai.memory.record.id"] == record_id
    assert delete.attributes["gen_ai.memory.record.count"] == len(result["forgotten"]) == 1
    assert delete.attributes["agent_memory.forget.erased.search_log"] == 1  # the search that found it


def test_a_get_is_a_tool_span_naming_the_record_and_a_miss_is_an_error(traced):
    session = traced.service.start_session(agent_id="assistant", user_id="alice")
    record_id = write(session, "The user's bike is a green Brompton.")
    traced.exporter.clear()

    assert session.call_tool("memory_get", {"record_id": record_id})["ok"]
    assert not session.call_tool("memory_get", {"record_id": "mem_0000000000000000"})["ok"]

    found, missed = traced.spans("execute_tool memory_get")
    assert found.attributes["gen_ai.memory.record.id"] == record_id and _status(found)[0] == "UNSET"
    assert _status(missed) == ("ERROR", "not_found") and missed.attributes["error.type"] == "not_found"
    assert "gen_ai.memory.record.id" not in missed.attributes  # an id that names no record is not copied


def test_a_refused_write_marks_its_span_with_the_code_and_the_stage_it_stopped_in(traced):
    session = traced.service.start_session(agent_id="assistant", user_id="alice", project_id="apollo")
    refused = session.call_tool("memory_write", {"type": "semantic", "content": "The launch moved to May.",
                                                 "target": "current_project"})  # no grant on project:apollo

    assert refused["ok"] is False and refused["error"]["code"] == "permission_denied"
    tool, upsert = traced.one("execute_tool memory_write"), traced.one("upsert_memory")
    for span in (tool, upsert):
        assert _status(span) == ("ERROR", "permission_denied") and span.attributes["error.type"] == "permission_denied"
    assert upsert.attributes["agent_memory.failed_stage"] == "permission_check"
    assert tool.attributes["agent_memory.tool.ok"] is False


def test_invalid_arguments_and_unknown_tools_are_tool_spans_with_the_code(traced):
    session = traced.service.start_session(agent_id="assistant", user_id="alice")
    session.call_tool("memory_write", {"type": "semantic"})
    session.call_tool("drop_every_table", {})

    invalid, unknown = traced.spans()
    assert invalid.name == "execute_tool memory_write" and _status(invalid) == ("ERROR", "invalid_input")
    assert unknown.name == "execute_tool other" and unknown.attributes["gen_ai.tool.name"] == "other"
    assert _status(unknown) == ("ERROR", "unknown_tool")


def test_an_extraction_attempt_is_a_workflow_span_with_its_writes_beneath(traced):
    _, run_id = ended_session(traced.service, [("user", "I prefer concise technical answers."), ("assistant", "Noted.")])
    traced.exporter.clear()

    detail = traced.service.run_extraction(run_id)

    assert detail.status == "succeeded"
    run = traced.one("invoke_workflow memory_extraction")
    assert run.parent is None and _status(run)[0] == "UNSET"
    assert run.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert run.attributes["agent_memory.extraction.run_id"] == run_id
    assert run.attributes["agent_memory.extraction.status"] == "succeeded"
    outcomes = [c["outcome"] for c in detail.candidates]
    assert run.attributes["agent_memory.extraction.candidates"] == len(outcomes)
    assert run.attributes["agent_memory.extraction.outcome.created"] == outcomes.count("created") >= 1
    writes = [s for s in traced.spans("upsert_memory") if s.parent.span_id == run.context.span_id]
    assert len(writes) == outcomes.count("created")  # the fact and the session summary
    recorded = detail.attempts[-1]["stages"]
    assert {k: v for k, v in run.attributes.items() if k.startswith("agent_memory.extraction.stage.")} == {
        f"agent_memory.extraction.stage.{k}.ms": v for k, v in recorded.items()}


def test_a_failed_extraction_attempt_is_an_error_span(traced):
    from memory_core.extract.runner import ExtractionRunner

    class Broken:
        name = "broken"

        def extract(self, transcript):
            raise RuntimeError("the extractor fell over on 'I prefer concise technical answers.'")

    _, run_id = ended_session(traced.service, [("user", "I prefer concise technical answers.")])
    traced.service.extraction = ExtractionRunner(traced.service.extraction_deps(), extractor=Broken())
    traced.exporter.clear()

    detail = traced.service.run_extraction(run_id)

    run = traced.one("invoke_workflow memory_extraction")
    assert detail.status in ("queued", "failed")
    assert run.attributes["agent_memory.extraction.status"] == detail.status
    assert _status(run) == ("ERROR", "extraction_attempt_failed")
    assert run.attributes["agent_memory.extraction.failed_stage"] == "extractor"
    assert not traced.spans("upsert_memory")


def test_a_write_that_fails_unexpectedly_names_the_stage_it_failed_in(traced, monkeypatch):
    session = traced.service.start_session(agent_id="assistant", user_id="alice")

    def broken(texts):
        raise RuntimeError("the embedder crashed")

    monkeypatch.setattr(traced.service.ingestor.embedder, "embed", broken)
    result = session.call_tool("memory_write", {"type": "semantic", "content": "The user's bike is a green Brompton."})

    assert result["error"]["code"] == "internal_error"
    upsert = traced.one("upsert_memory")
    assert _status(upsert)[0] == "ERROR" and upsert.attributes["agent_memory.failed_stage"] == "content_embedding"
