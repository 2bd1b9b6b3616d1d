"""agent-memory import --from mem0: provisional records in the named user's scope, tags for what mem0 kept."""

import json
from pathlib import Path

import pytest

from memory_core.cli import main
from memory_core.errors import InvalidInputError
from memory_core.portable.mem0 import import_mem0
from memory_core.store.overview import review_queue_sizes

DATA = Path(__file__).resolve().parents[2] / "data" / "mem0"


def test_get_all_memories_become_provisional_inferences_in_the_users_scope(service):
    report = import_mem0(service, DATA / "get_all.json", user_id="alice")
    actions = [(item["line"], item["action"]) for item in report["lines"]]
    assert actions == [(1, "create"), (2, "create"), (3, "create"), (4, "refuse"), (5, "refuse")]
    assert "belongs to mem0 user 'bob'" in report["lines"][3]["error"]["message"]
    records = {r.content: r for r in (service.record(item["record_id"]) for item in report["lines"] if item["action"] == "create")}
    assert set(records) == {"Prefers vegetarian food", "Lives in Lisbon and works as a nurse", "Allergic to peanuts \u202eRTL\u202c"}
    for record in records.values():
        assert (record.scope, record.source_kind, record.status) == ("user:alice", "agent_inference", "provisional")
    tags = records["Prefers vegetarian food"].tags
    assert "mem0:id=3c90c3cc-0d44-4b50-8888-8dd25736052a" in tags and "mem0:created_at=2025-07-14T09:12:44.101234-07:00" in tags
    assert "mem0:metadata.priority=2" in tags and "mem0:metadata.source=chat" in tags
    assert "mem0:run_id=trip-planning-7" in records["Lives in Lisbon and works as a nurse"].tags
    assert review_queue_sizes(service.store)["provisional"] == 3  # waiting for a reviewer


def test_the_export_shape_skips_deleted_memories_and_folds_repeats(service):
    report = import_mem0(service, DATA / "export.json", user_id="carol")
    assert [item["action"] for item in report["lines"]] == ["create", "skip", "reinforce"]
    record = service.record(report["lines"][0]["record_id"])
    assert "mem0:category=hobbies" in record.tags
    assert report["lines"][2]["record_id"] == record.id  # the same claim again: the claim rules fold it in
    assert service.store.scalar("SELECT COUNT(*) FROM records WHERE content LIKE '%Berlin%'") == 0


def test_a_dry_run_writes_nothing_and_an_agent_needs_a_grant(service):
    before = service.store.scalar("SELECT COUNT(*) FROM write_log")
    dry = import_mem0(service, DATA / "get_all.json", user_id="alice", dry_run=True)
    assert dry["counts"] == {"create": 3, "refuse": 2}
    assert service.store.scalar("SELECT COUNT(*) FROM records") == 0 and service.store.scalar("SELECT COUNT(*) FROM write_log") == before
    report = import_mem0(service, DATA / "get_all.json", user_id="alice", agent_id="stranger")
    assert report["counts"] == {"refuse": 5}
    assert service.store.scalar("SELECT COUNT(*) FROM records") == 0


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe", b'{"something": []}', b"42"])
def test_a_file_that_is_not_mem0s_is_refused_whole(service, tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(InvalidInputError):
        import_mem0(service, path, user_id="alice")
    assert service.store.scalar("SELECT COUNT(*) FROM records") == 0


def test_hostile_memories_are_refused_one_by_one(service, tmp_path):
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps([{"memory": "lone \ud800 surrogate"}, {"memory": ["not", "text"]}, "a string",
                                {"memory": "x" * 100_000}, {"memory": "fine one", "metadata": {"k": "v" * 1000}}]))
    report = import_mem0(service, path, user_id="alice")
    assert [item["action"] for item in report["lines"]] == ["refuse", "refuse", "refuse", "refuse", "create"]
    tag = [t for t in service.record(report["lines"][4]["record_id"]).tags if t.startswith("mem0:metadata.k=")][0]
    assert len(tag) <= 200


def test_the_cli_needs_a_user_and_reports_each_memory(tmp_path, capsys, make_target, clock, settings):
    target = make_target("mem0.sqlite")
    assert main(["import", "--path", str(target), "--from", "mem0", str(DATA / "export.json")]) == 2
    assert "--user" in capsys.readouterr().err
    assert main(["import", "--path", str(target), "--from", "mem0", "--user", "carol", "--dry-run", str(DATA / "export.json")]) == 0
    out = capsys.readouterr().out
    assert "line 1: would create" in out and "line 2: would skip" in out
