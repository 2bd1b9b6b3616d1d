"""``agent-memory migrate-store``: SQLite → PostgreSQL → SQLite keeps every row of every table,
byte for byte, and the stores answer searches the same way."""

import json

import pytest

from memory_core import MemoryService
from memory_core.cli import main
from memory_core.clock import format_ts
from memory_core.settings import default_settings
from memory_core.store.backend import open_store
from memory_core.store.transfer import TABLES, _columns, table_checksum
from tests.fakes import HashingEmbedder
from tests.helpers import write
from tests.unit.extract.helpers import ended_session

QUERIES = ["where does the user live", "Priya sushi", "deploy the service", "peanut allergy"]


def _build(svc):
    svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
    svc.grant("pm", "project:atlas", read=True, write=True, actor="t")
    s = svc.start_session(agent_id="assistant", user_id="alice")
    write(s, "The user loves sushi with Priya — café «Zé» on Fridays 🍣.", attribute="food", mentions=["Priya"])
    allergy = write(s, "The user is allergic to peanuts.", attribute="allergy")
    s.call_tool("memory_revise", {"action": "update", "record_id": allergy, "reason": "detail",
                                  "content": "The user is severely allergic to peanuts."})
    gone = write(s, "The user's old locker code is 4411.", attribute="locker")
    s.call_tool("memory_forget", {"record_id": gone, "reason": "asked"})
    write(s, "Priyanka is Priya's sister.", about="Priyanka", about_kind="person", attribute="relation")
    p = svc.start_session(agent_id="pm", user_id="carol", project_id="atlas")
    result = p.call_tool("memory_write", {"type": "procedural", "target": "current_project", "content": "How to deploy the service.",
                                          "attribute": "deploy the service", "about": "atlas", "about_kind": "project",
                                          "procedure": {"name": "deploy the service", "trigger": "a release is tagged",
                                                        "steps": ["build", "push", "roll out"]}})
    assert result["ok"], result
    _, run_id = ended_session(svc, [("user", "I live in Porto now."), ("assistant", "Noted.")])
    svc.run_extraction(run_id)
    for q in QUERIES:
        s.call_tool("memory_search", {"query": q})
    entities = svc.store.query("SELECT id FROM entities WHERE canonical_name IN ('Priya', 'Priyanka') ORDER BY canonical_name")
    if len(entities) == 2:
        svc.merge_entities(entities[1][0], entities[0][0], actor="t", reason="same person")


def _answers(target, clock):
    svc = MemoryService.open(target, default_settings(), clock=clock, embedder=HashingEmbedder())
    try:
        return [[(svc.record(r.record_id).content, r.explanation.generators.get("lexical", {}).get("lexical"))
                 for r in svc.search(agent_id="assistant", user_id="alice", query=q).results] for q in QUERIES]
    finally:
        svc.close()


def _checksums(target):
    store = open_store(target, "2026-01-01T00:00:00Z")
    try:
        return {t: table_checksum(store, t, _columns(store, t), order) for t, order in TABLES if t != "search_log"} | {
            "search_log": table_checksum(store, "search_log", _columns(store, "search_log"), "seq")}
    finally:
        store.close()


def test_a_store_goes_to_postgresql_and_back_unchanged(tmp_path, new_target, clock, capsys):
    source = tmp_path / "source.sqlite"
    svc = MemoryService.open(source, default_settings(), clock=clock, embedder=HashingEmbedder())
    _build(svc)
    svc.close()
    pg = new_target("postgresql")
    assert main(["migrate-store", str(source), pg, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and {t["table"] for t in report["tables"]} == {t for t, _ in TABLES}
    counts = {t["table"]: t["source_rows"] for t in report["tables"]}
    assert all(counts[t] > 0 for t in ("records", "entities", "entity_aliases", "record_entities", "procedures", "grants",
                                       "sessions", "turns", "extraction_runs", "events", "write_log", "search_log"))
    back = tmp_path / "back.sqlite"
    assert main(["migrate-store", pg, str(back)]) == 0
    assert "verified: every table matches" in capsys.readouterr().out
    original = _checksums(source)
    assert _checksums(pg) == original
    assert _checksums(back) == original
    assert _answers(pg, clock) == _answers(source, clock) == _answers(back, clock)


def test_a_non_empty_destination_is_refused_and_left_alone(tmp_path, new_target, clock, capsys):
    source = tmp_path / "source.sqlite"
    svc = MemoryService.open(source, default_settings(), clock=clock, embedder=HashingEmbedder())
    svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
    write(svc.start_session(agent_id="assistant", user_id="alice"), "The user likes tea.", attribute="drink")
    svc.close()
    pg = new_target("postgresql")
    assert main(["migrate-store", str(source), pg]) == 0
    before = _checksums(pg)
    assert main(["migrate-store", str(source), pg]) == 2
    assert "not empty" in capsys.readouterr().err
    assert _checksums(pg) == before
