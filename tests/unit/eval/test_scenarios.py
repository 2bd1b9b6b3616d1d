import json

import pytest

from memory_core.eval.scenarios import CATEGORIES, Scenario, ScenarioRunner, format_table, load_scenarios, summary_rows
from tests.fakes import HashingEmbedder


def test_the_packaged_suite_loads_and_covers_every_category():
    scenarios = load_scenarios()
    assert {s.category for s in scenarios} == set(CATEGORIES)
    assert len({s.id for s in scenarios}) == len(scenarios)


def test_unknown_keys_and_categories_are_refused():
    with pytest.raises(ValueError, match="unknown scenario keys"):
        Scenario.from_dict({"id": "x", "category": "desired_write", "title": "t", "steps": [], "surprise": 1})
    with pytest.raises(ValueError, match="unknown category"):
        Scenario.from_dict({"id": "x", "category": "vibes", "title": "t", "steps": []})


WRITE_ONLY = {
    "id": "unit.write_only", "category": "prohibited_write", "title": "judged from the write log",
    "grants": [{"agent": "a", "scope": "user:u", "read": True, "write": True}, {"agent": "r", "scope": "user:u", "read": True}],
    "steps": [
        {"session": {"name": "s", "agent": "a", "user": "u"}},
        {"session": {"name": "ro", "agent": "r", "user": "u"}},
        {"turn": {"session": "s", "role": "user", "content": "My cat is called Tom."}},
        {"tool": {"session": "s", "name": "memory_write", "args": {"type": "semantic", "content": "The user's cat is called Tom.",
                  "attribute": "cat", "source_kind": "user_statement", "evidence": "My cat is called Tom."}},
         "save": "cat", "expect": {"ok": True, "logged": True, "status": "confirmed", "downgraded": False, "records_added": 1}},
        {"record": {"ref": "$cat", "status": "confirmed", "subject_scope": "user:u"}},
        {"tool": {"session": "ro", "name": "memory_write", "args": {"type": "semantic", "content": "x is y.", "attribute": "x"}},
         "expect": {"ok": False, "error_code": "permission_denied", "logged": True, "outcome": "refused", "records_added": 0}},
        {"tool": {"session": "s", "name": "memory_write", "args": {"type": "semantic", "content": "The user's dog is Rex.",
                  "attribute": "dog", "source_kind": "user_statement", "evidence": "My dog is Rex."}},
         "expect": {"ok": True, "downgraded": False}},
    ],
}


def test_runner_judges_from_the_logs_and_reports_failures(tmp_path):
    runner = ScenarioRunner(tmp_path, embedder=HashingEmbedder())
    result = runner.run(Scenario.from_dict(json.loads(json.dumps(WRITE_ONLY))))
    assert result.error is None
    failed = result.failures()
    # the last expectation is deliberately wrong: the quote is not in the transcript, so it is downgraded
    assert [c.what for c in failed] == ["not downgraded"]
    assert all(c.ok for c in result.checks[:-1])
    rows = summary_rows([result])
    assert next(r for r in rows if r["category"] == "prohibited_write")["result"] == "FAIL"
    assert "not downgraded" in format_table([result])


def test_a_broken_scenario_is_an_error_not_a_crash(tmp_path):
    broken = {"id": "unit.broken", "category": "desired_write", "title": "t", "steps": [{"record": {"ref": "$nothing"}}]}
    result = ScenarioRunner(tmp_path, embedder=HashingEmbedder()).run(Scenario.from_dict(broken))
    assert not result.passed and "nothing" in result.error


def test_a_known_gap_is_reported_but_does_not_fail(tmp_path):
    data = json.loads(json.dumps(WRITE_ONLY))
    data["steps"][-1]["known_gap"] = "the quote is invented on purpose"
    result = ScenarioRunner(tmp_path, embedder=HashingEmbedder()).run(Scenario.from_dict(data))
    assert result.passed and not result.failures()
    assert [c.what for c in result.known_gaps() if not c.ok] == ["not downgraded"]
    assert "known gap at unit.write_only step 7" in format_table([result])


def test_step_keys_are_checked_and_guard_false_keeps_a_search_out_of_the_guard_set(tmp_path):
    with pytest.raises(ValueError, match="unknown keys"):
        Scenario.from_dict({"id": "x", "category": "desired_write", "title": "t", "steps": [{"tool": {}, "expct": {}}]})
    data = {"id": "unit.guard", "category": "search_vs_no_search", "title": "t",
            "grants": [{"agent": "a", "scope": "user:u", "read": True, "write": True}],
            "steps": [{"session": {"name": "s", "agent": "a", "user": "u"}},
                      {"turn": {"session": "s", "role": "user", "content": "My cat is called Tom."}},
                      {"tool": {"session": "s", "name": "memory_write", "args": {"type": "semantic", "content": "The user's cat is called Tom.",
                                "attribute": "cat", "source_kind": "user_statement", "evidence": "My cat is called Tom."}}},
                      {"tool": {"session": "s", "name": "memory_search", "args": {"query": "cat called Tom"}}, "expect": {"top": "$x"}} ]}
    data["steps"][2]["save"] = "x"
    runner = ScenarioRunner(tmp_path, embedder=HashingEmbedder())
    assert [g.answerable for g in runner.run(Scenario.from_dict(data)).gate_samples] == [True]
    data["steps"][3]["guard"] = False
    data["id"] = "unit.guard2"
    assert runner.run(Scenario.from_dict(data)).gate_samples == []
