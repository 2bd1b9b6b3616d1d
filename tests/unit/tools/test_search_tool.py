"""memory_search through the tool surface."""

import json

from tests.helpers import write


def test_memory_search_is_registered_with_its_schema(alice):
    assert "memory_search" in alice.service.tools
    schema = next(s for s in alice.tool_schemas() if s["name"] == "memory_search")
    props = schema["input_schema"]["properties"]
    assert set(props) == {"query", "types", "time_from", "time_to", "entity_hints", "limit", "historical",
                          "as_of", "as_of_mode"}
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


def _search_schema(schemas):
    return next(s for s in schemas if s["name"] == "memory_search")["input_schema"]["properties"]


def _bound(prop, key):
    return next(branch[key] for branch in prop.get("anyOf", [prop]) if key in branch)


def test_the_advertised_limit_is_exactly_what_the_handler_accepts(tmp_path, clock):
    from memory_core import MemoryService
    from memory_core.settings import default_settings
    from tests.fakes import HashingEmbedder

    for max_limit in (3, 50):
        settings = default_settings(retrieval={"max_limit": max_limit, "max_query_chars": 120})
        with MemoryService.open(tmp_path / f"m{max_limit}.sqlite", settings, clock=clock, embedder=HashingEmbedder()) as service:
            service.grant("assistant", "user:alice", read=True, write=True, actor="test")
            session = service.start_session(agent_id="assistant", user_id="alice")
            for schemas in (service.tool_schemas(), session.tool_schemas()):
                props = _search_schema(schemas)
                assert _bound(props["limit"], "maximum") == max_limit
                assert _bound(props["query"], "maxLength") == 120
            assert session.call_tool("memory_search", {"query": "tea", "limit": max_limit})["ok"]
            refused = session.call_tool("memory_search", {"query": "tea", "limit": max_limit + 1})
            assert refused["error"]["code"] == "invalid_input" and refused["error"]["details"] == {"field": "limit"}
            assert not session.call_tool("memory_search", {"query": "t" * 121})["ok"]
