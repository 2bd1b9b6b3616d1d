"""Issue 11 on the write path: what a write says it did, system facts, procedures, refusals."""

from __future__ import annotations

import json

import pytest

from memory_core.errors import InvalidInputError
from memory_core.ingest.writer import BEFORE, IN_TRANSACTION, AFTER


def write(session, **args):
    result = session.call_tool("memory_write", args)
    assert result["ok"], result
    return result


def said(session, text: str, content: str, attribute: str) -> dict:
    session.record_turn("user", text)
    return write(session, type="semantic", content=content, attribute=attribute, source_kind="user_statement", evidence=text)


def test_the_write_path_is_a_list_of_named_stages():
    names = [s.name for s in (*BEFORE, *IN_TRANSACTION, *AFTER)]
    assert names == ["input_validation", "permission_check", "evidence_validation", "content_embedding",
                     "entity_link_resolution", "duplicate_search", "contradiction_check", "sqlite_transaction",
                     "event_log_write", "vector_index_update"]


def test_a_changed_value_supersedes_and_the_result_says_so(alice, service):
    old = said(alice, "My phone number is 555-0143.", "The user's phone number is 555-0143.", "phone")
    new = said(alice, "My phone number is 555-0199.", "The user's phone number is 555-0199.", "phone")
    assert new["outcome"] == "created" and new["superseded"] == [old["record_id"]]
    assert new["summary"] == f"created {new['record_id']}; superseded {old['record_id']}"
    assert service.record(old["record_id"]).status == "superseded"
    row = service.store.query_one("SELECT validation FROM write_log WHERE record_id = ?", (new["record_id"],))
    comparisons = json.loads(row["validation"])["claim_comparisons"]
    assert comparisons[0]["record_id"] == old["record_id"] and not comparisons[0]["same"]


def test_a_lower_rank_different_value_is_a_flagged_conflict(alice, service):
    old = said(alice, "I live in Berlin.", "The user lives in Berlin.", "home_city")
    guess = write(alice, type="semantic", content="The user lives in Munich.", attribute="home_city")
    assert guess["conflicts_with"] == [old["record_id"]] and guess["flagged_for_review"]
    assert "conflict with" in guess["summary"]
    record = service.record(guess["record_id"])
    assert record.review_flagged_at is not None and "home_city" in record.review_reason
    assert any(old["record_id"] in note and "flagged for review" in note for note in guess["notes"])
    assert service.store.scalar("SELECT COUNT(*) FROM events WHERE kind = 'record.conflict_flagged'") == 1


def test_hates_jazz_after_loves_jazz_supersedes_through_extraction(service):
    from tests.unit.extract.helpers import ended_session

    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    ended_session(service, [("user", "I love jazz."), ("assistant", "Noted.")])
    service.run_extraction()
    service.clock.advance(days=2)
    ended_session(service, [("user", "I hate jazz."), ("assistant", "Noted.")])
    service.run_extraction()
    rows = service.store.query("SELECT content, status, attribute FROM records WHERE type = 'semantic' ORDER BY seq")
    assert [(r["content"], r["status"]) for r in rows] == [("The user loves jazz.", "superseded"), ("The user hates jazz.", "confirmed")]
    assert rows[0]["attribute"] == rows[1]["attribute"] == "jazz_preference"


def test_system_facts_are_confirmed_rank_three_and_logged(service):
    outcome = service.write_system_fact(scope="user:alice", content="The user's plan is Enterprise.", attribute="plan",
                                        source_ref="billing:42", actor="host:billing")
    record = outcome.record
    assert record.source_kind == "system" and record.status == "confirmed" and record.confidence == 0.95
    row = service.store.query_one("SELECT operation, actor, outcome FROM write_log WHERE record_id = ?", (record.id,))
    assert dict(row) == {"operation": "system_fact", "actor": "host:billing", "outcome": "created"}
    # An inference cannot replace it; a user statement can.
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    session = service.start_session(agent_id="assistant", user_id="alice")
    guess = write(session, type="semantic", content="The user's plan is Free.", attribute="plan")
    assert guess["conflicts_with"] == [record.id]
    upgrade = said(session, "I'm on the Team plan now.", "The user's plan is Team.", "plan")
    assert record.id in upgrade["superseded"]


def test_the_model_cannot_claim_a_system_source(alice, service):
    result = alice.call_tool("memory_write", {"type": "semantic", "content": "x", "source_kind": "system"})
    assert result["error"]["code"] == "invalid_input"
    schema = {t["name"]: t for t in service.tool_schemas()}["memory_write"]["input_schema"]
    assert "system" not in json.dumps(schema["properties"]["source_kind"])


def test_refusals_leave_a_log_row_with_their_reason(alice, service):
    alice.call_tool("memory_write", {"type": "semantic", "content": "The user likes tea.", "target": "team"})
    alice.call_tool("memory_revise", {"action": "confirm", "record_id": "mem_missing", "reason": "r"})
    alice.call_tool("memory_write", {"type": "semantic", "content": "x" * 5000})
    rows = service.store.query("SELECT operation, outcome, record_id, validation FROM write_log ORDER BY seq")
    refused = [(r["operation"], json.loads(r["validation"])["refused"]["code"], r["record_id"]) for r in rows]
    assert refused == [("memory_write", "invalid_input", None), ("memory_revise", "not_found", "mem_missing"),
                       ("memory_write", "invalid_input", None)]
    assert all(r["outcome"] == "refused" for r in rows)
    assert "unknown write target" in json.loads(rows[0]["validation"])["refused"]["message"]
    assert len(rows[2]["validation"]) < 5000 or "characters]" in rows[2]["validation"]


PROCEDURE = {"name": "Rotate a leaked API key", "trigger": "an API key shows up in a log or a commit",
             "steps": ["Revoke the key in the console", "Issue a new key", "Update the secret store"],
             "pitfalls": ["Do not delete the old key before the new one is deployed"]}


@pytest.mark.sqlite_only
def test_procedural_records_are_versioned_and_found_by_name_and_trigger(alice, service):
    first = write(alice, type="procedural", content="How to recover when an API key leaks.", procedure=PROCEDURE)
    got = alice.call_tool("memory_get", {"record_id": first["record_id"]})["record"]
    assert got["procedure"]["steps"] == PROCEDURE["steps"] and got["procedure"]["trigger"] == PROCEDURE["trigger"]
    assert "1. Revoke the key in the console" in got["content"]
    fts = service.store.query_one("SELECT content FROM records_fts WHERE rowid = (SELECT seq FROM records WHERE id = ?)",
                                  (first["record_id"],))["content"]
    assert "Rotate a leaked API key" in fts and "shows up in a log" in fts
    again = write(alice, type="procedural", content="How to recover when an API key leaks.", procedure=PROCEDURE)
    assert again["outcome"] == "reinforced"
    v2 = write(alice, type="procedural", content="How to recover when an API key leaks.",
               procedure={**PROCEDURE, "steps": [*PROCEDURE["steps"], "Audit the logs for use of the old key"]})
    assert v2["superseded"] == [first["record_id"]] and service.record(v2["record_id"]).version == 2


@pytest.mark.parametrize("procedure,field", [
    ({"name": "x", "trigger": "y", "steps": []}, "steps"),
    ({"name": "", "trigger": "y", "steps": ["a"]}, "name"),
    ({"name": "x", "trigger": "y", "steps": ["a"], "extra": 1}, "extra"),
    ({"name": "x", "trigger": "y" * 501, "steps": ["a"]}, "trigger"),
])
def test_bad_procedures_are_refused(alice, service, procedure, field):
    result = alice.call_tool("memory_write", {"type": "procedural", "content": "d", "procedure": procedure})
    assert result["error"]["code"] == "invalid_input" and field in json.dumps(result["error"])
    assert service.store.scalar("SELECT COUNT(*) FROM records") == 0


def test_a_procedure_on_a_non_procedural_record_is_refused(alice):
    result = alice.call_tool("memory_write", {"type": "semantic", "content": "d", "procedure": PROCEDURE})
    assert result["error"]["code"] == "invalid_input"


@pytest.mark.parametrize("value", ["東京", "Zürich", "İstanbul", "ﬁle", "a\u0301", "🎷", "\u202etxt", "Ω≈ç√", "𝔘𝔫𝔦"])
def test_odd_unicode_values_are_kept_distinct(alice, service, value):
    one = write(alice, type="semantic", content=f"The user's code name is {value}.", attribute="code_name")
    two = write(alice, type="semantic", content=f"The user's code name is {value}2.", attribute="code_name")
    assert two["outcome"] == "created" and two["superseded"] == [one["record_id"]]
    assert service.record(two["record_id"]).content == f"The user's code name is {value}2."


def test_system_fact_input_is_validated(service):
    with pytest.raises(InvalidInputError):
        service.write_system_fact(scope="user:alice", content="   ")
    assert service.store.scalar("SELECT COUNT(*) FROM records") == 0
    assert service.store.scalar("SELECT COUNT(*) FROM write_log WHERE outcome = 'refused'") == 1


def test_the_write_tool_schema_is_self_contained(alice):
    schema = {t["name"]: t for t in alice.tool_schemas()}["memory_write"]["input_schema"]
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text
    procedure = next(option for option in schema["properties"]["procedure"]["anyOf"] if option.get("type") == "object")
    assert set(procedure["required"]) == {"name", "trigger", "steps"} and procedure["additionalProperties"] is False


def test_forgetting_a_procedure_erases_its_steps(alice, service):
    made = write(alice, type="procedural", content="How to recover when an API key leaks.", procedure=PROCEDURE)
    assert alice.call_tool("memory_forget", {"record_id": made["record_id"], "reason": "asked"})["ok"]
    assert service.store.scalar("SELECT COUNT(*) FROM procedures") == 0
    assert service.procedure(made["record_id"]) is None


def test_a_procedure_is_found_by_words_of_its_trigger(alice):
    for i in range(5):  # BM25 needs a few other documents to weigh the trigger's words
        write(alice, type="semantic", content=f"The user likes topic {i} a lot.", attribute=f"topic_{i}")
    made = write(alice, type="procedural", content="How to recover when credentials get out.", procedure=PROCEDURE)
    found = alice.call_tool("memory_search", {"query": "what to do when an API key shows up in a commit"})
    hit = next(r for r in found["results"] if r["id"] == made["record_id"])
    assert "lexical" in hit["why"]["matched_by"]  # the words are in the trigger, not in the description
