"""The demo store exported, imported into an empty store and exported again: the same file, the same answers."""

import json

from memory_core import FixedClock, MemoryService
from memory_core.demo import demo_settings
from memory_core.portable.export import export_to
from memory_core.portable.importer import import_file

QUESTIONS = {
    ("assistant", "alice"): ["how does the user like answers written", "what is the atlas project deadline", "coffee or tea"],
    ("coder", "bob"): ["which database does atlas use", "code review rules", "what editor"],
    ("researcher", "carol"): ["beacon study design", "who leads northwind", "travel plans"],
}


def test_the_demo_store_round_trips_with_equal_export_and_equal_search_answers(demo_service, tmp_path):
    export_to(demo_service, tmp_path / "demo.jsonl", sessions=True)
    target = MemoryService.open(tmp_path / "empty.sqlite", demo_settings(), clock=FixedClock(demo_service.clock.now()))
    try:
        report = import_file(target, tmp_path / "demo.jsonl")
        assert set(report["counts"]) == {"create"}, [item for item in report["lines"] if item["action"] != "create"]
        export_to(target, tmp_path / "again.jsonl", sessions=True)
        first = (tmp_path / "demo.jsonl").read_text(encoding="utf-8").splitlines()
        again = (tmp_path / "again.jsonl").read_text(encoding="utf-8").splitlines()
        assert json.loads(first[0])["scopes"] == json.loads(again[0])["scopes"]
        assert again[1:] == first[1:]
        for grant in demo_service.grants():
            target.grant(grant["agent_id"], grant["scope"], read=grant["can_read"], write=grant["can_write"], actor="test")
        answered = 0
        for (agent, user), questions in QUESTIONS.items():
            for question in questions:
                mine = demo_service.search(agent_id=agent, user_id=user, query=question)
                theirs = target.search(agent_id=agent, user_id=user, query=question)
                assert [r.record.id for r in theirs.results] == [r.record.id for r in mine.results], (agent, question)
                assert theirs.empty_reason == mine.empty_reason
                answered += bool(mine.results)
        assert answered >= 3  # not a comparison of empty answers only
    finally:
        target.close()
