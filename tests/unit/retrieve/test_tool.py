"""memory_search through the tool surface."""

import json

from memory_core.tools import TOOLS

from .helpers import write


def test_memory_search_is_registered_with_its_schema(alice):
    assert "memory_search" in TOOLS
    schema = next(s for s in alice.tool_schemas() if s["name"] == "memory_search")
    props = schema["input_schema"]["properties"]
    assert set(props) == {"query", "types", "time_from", "time_to", "entity_hints", "limit", "historical"}
    assert schema["input_schema"]["required"] == ["query"]


def test_results_are_json_with_a_reason_per_result(alice):
    record_id = write(alice, "The user prefers concise technical answers.", attribute="answer_style")
    result = alice.call_tool("memory_search", json.dumps({"query": "concise answers", "types": ["semantic"], "limit": 3}))
    assert result["ok"] and result["empty_reason"] is None
    json.dumps(result)
    (item,) = result["results"]
    assert item["id"] == record_id and item["content"] == "The user prefers concise technical answers."
    assert item["why"]["matched_by"] and item["why"]["gate"].startswith("passed: ")
    assert item["entities"] == ["alice"] and item["status"] == "provisional"
    assert result["explanation"]["summary"].startswith("1 result(s)")
    row = alice.service.store.query_one("SELECT session_id, agent_id, user_id FROM search_log WHERE id = ?", (result["search_id"],))
    assert tuple(row) == (alice.id, "assistant", "alice")


def test_an_empty_answer_says_why(alice):
    write(alice, "The user prefers concise technical answers.", attribute="answer_style")
    result = alice.call_tool("memory_search", {"query": "quantum chromodynamics"})
    assert result["ok"] and result["results"] == []
    assert result["empty_reason"].endswith("no entity match")


def test_bad_arguments_come_back_as_structured_errors(alice):
    cases = [
        ({"query": "x", "scope": "user:bob"}, "scope"),
        ({"query": "x", "types": ["memo"]}, "types"),
        ({"query": "x", "time_from": "last week"}, "time_from"),
        ({}, "query"),
    ]
    for args, field in cases:
        result = alice.call_tool("memory_search", args)
        assert not result["ok"] and result["error"]["code"] == "invalid_input"
        assert any(p["field"].startswith(field) for p in result["error"]["details"]["problems"]), result
    too_many = alice.call_tool("memory_search", {"query": "x", "limit": 400})
    assert too_many["error"] == {"code": "invalid_input", "message": "limit must be an integer from 1 to 50", "details": {"field": "limit"}}
