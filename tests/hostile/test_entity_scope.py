"""Defect 6: a shared record never shows the name of an entity its reader may not read."""

from __future__ import annotations

import pytest

import json

from memory_core.ingest.entity_resolution import create_entity
from memory_core.policy.scopes import Scope
from memory_core.store.records import fts_sync

NOW = "2026-03-05T10:00:00.000000Z"


def _setup(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    service.grant("assistant", "project:p1", read=True, write=True, actor="t")
    service.grant("helper", "project:p1", read=True, write=False, actor="t")
    with service.store.transaction() as conn:
        private = create_entity(conn, name="Kim Varga psychotherapist", kind="person", scope=Scope("user", "alice"),
                                now=NOW, actor="t", aliases=["Kim"])
    alice = service.start_session(agent_id="assistant", user_id="alice", project_id="p1")
    bob = service.start_session(agent_id="helper", user_id="bob")
    return private, alice, bob


def test_a_project_note_about_kim_does_not_link_alices_private_entity(service):
    private, alice, bob = _setup(service)
    note = alice.call_tool("memory_write", {"type": "semantic", "content": "Kim reviews the p1 onboarding copy.",
                                            "attribute": "copy_reviewer", "target": "current_project", "about": "Kim",
                                            "about_kind": "person", "mentions": ["Kim"]})
    assert note["ok"], note
    record = service.record(note["record_id"])
    assert private not in {link["entity_id"] for link in record.entity_links}
    assert all(link["scope"] == "project:p1" for link in record.entity_links)
    got = bob.call_tool("memory_get", {"record_id": note["record_id"]})
    assert got["ok"]
    found = bob.call_tool("memory_search", {"query": "who reviews the onboarding copy Kim"})
    assert found["ok"] and any(r["id"] == note["record_id"] for r in found["results"])
    lexical = bob.call_tool("memory_search", {"query": "psychotherapist Varga"})
    shown = json.dumps([got, found]).casefold()
    assert "varga" not in shown and "psychotherapist" not in shown
    # The private alias is not in the note's FTS row either (the lexical generator finds nothing).
    assert lexical["ok"] and lexical["explanation"]["candidates"]["lexical"] == 0, lexical
    # Alice's own agent still resolves "Kim" to her private entity in her personal scope.
    mine = alice.call_tool("memory_write", {"type": "semantic", "content": "Kim moved the session to Fridays.",
                                            "attribute": "session_day", "about": "Kim", "about_kind": "person"})
    assert service.record(mine["record_id"]).subject_entity_id == private


@pytest.mark.sqlite_only
def test_links_made_before_the_rule_are_hidden_from_readers_without_access(service):
    private, alice, bob = _setup(service)
    note = alice.call_tool("memory_write", {"type": "semantic", "content": "Kim reviews the p1 onboarding copy.",
                                            "attribute": "copy_reviewer", "target": "current_project", "about": "Kim",
                                            "about_kind": "person"})
    with service.store.transaction() as conn:  # a cross-scope link as an older version could have made
        conn.execute("INSERT INTO record_entities (record_id, entity_id, role) VALUES (?, ?, 'mention')", (note["record_id"], private))
        fts_sync(conn, service.record(note["record_id"]).seq)  # as migration 61 re-syncs such rows
    lexical = bob.call_tool("memory_search", {"query": "psychotherapist Varga"})
    assert lexical["ok"] and lexical["explanation"]["candidates"]["lexical"] == 0, lexical
    assert [c.status for c in service.doctor().checks if c.name == "entity link scopes"] == ["warn"]
    got = bob.call_tool("memory_get", {"record_id": note["record_id"]})
    found = bob.call_tool("memory_search", {"query": "who reviews the onboarding copy"})
    assert got["ok"] and found["ok"] and found["results"]
    shown = json.dumps([got, found]).casefold()
    assert "varga" not in shown and "psychotherapist" not in shown
    # Alice's agent, which may read user:alice, still sees it.
    assert "Kim Varga psychotherapist" in json.dumps(alice.call_tool("memory_get", {"record_id": note["record_id"]}))
