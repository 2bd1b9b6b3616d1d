"""Adversarial access tests: nothing crosses users, agents or projects without a grant."""

import pytest


@pytest.fixture
def world(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    service.grant("assistant", "user:bob", read=True, write=True, actor="t")
    service.grant("coder", "project:atlas", read=True, write=True, actor="t")
    alice = service.start_session(agent_id="assistant", user_id="alice")
    bob = service.start_session(agent_id="assistant", user_id="bob")
    coder = service.start_session(agent_id="coder", user_id="alice", project_id="atlas")
    records = {
        "alice": alice.call_tool("memory_write", {"type": "semantic", "content": "Alice's bank is Northwind.", "attribute": "bank"})["record_id"],
        "bob": bob.call_tool("memory_write", {"type": "semantic", "content": "Bob's bank is Contoso.", "attribute": "bank"})["record_id"],
        "atlas": coder.call_tool("memory_write", {"type": "semantic", "content": "Atlas deploys on Fridays.", "attribute": "deploy",
                                                  "target": "current_project", "about": "Atlas", "about_kind": "project"})["record_id"],
        "private": alice.call_tool("memory_write", {"type": "semantic", "content": "Private note.", "attribute": "n", "target": "personal"})["record_id"],
    }
    return service, alice, bob, coder, records


NOT_FOUND = "not_found"


def test_other_users_records_look_absent(world):
    service, alice, bob, coder, records = world
    for session, record in ((bob, records["alice"]), (alice, records["bob"])):
        for call in (("memory_get", {"record_id": record}),
                     ("memory_forget", {"record_id": record, "reason": "x"}),
                     ("memory_revise", {"action": "confirm", "record_id": record, "reason": "x"}),
                     ("memory_revise", {"action": "update", "record_id": record, "content": "y", "reason": "x"})):
            result = session.call_tool(*call)
            assert result["error"]["code"] == NOT_FOUND, call
            assert result["error"]["message"] == f"no record {record} is visible to this agent"


def test_missing_and_unreadable_records_get_the_same_error(world):
    service, alice, bob, coder, records = world
    hidden = bob.call_tool("memory_get", {"record_id": records["alice"]})["error"]
    missing = bob.call_tool("memory_get", {"record_id": "mem_0000000000000000"})["error"]
    assert hidden["code"] == missing["code"] and set(hidden) == set(missing)


def test_agents_without_project_grant_cannot_see_project_records(world):
    service, alice, bob, coder, records = world
    assert alice.call_tool("memory_get", {"record_id": records["atlas"]})["error"]["code"] == NOT_FOUND
    assert coder.call_tool("memory_get", {"record_id": records["atlas"]})["ok"]
    # The coder has no grant on alice's personal scope even while acting for alice.
    assert coder.call_tool("memory_get", {"record_id": records["alice"]})["error"]["code"] == NOT_FOUND


def test_private_scope_is_only_for_its_pair(service):
    service.settings.write.offer_private_target = True
    mine = service.start_session(agent_id="assistant", user_id="alice")
    note = mine.call_tool("memory_write", {"type": "semantic", "content": "Pair-private note.", "attribute": "n", "target": "private", "about": "note"})
    assert note["ok"], note
    other_agent = service.start_session(agent_id="coder", user_id="alice")
    other_user = service.start_session(agent_id="assistant", user_id="bob")
    for session in (other_agent, other_user):
        assert session.call_tool("memory_get", {"record_id": note["record_id"]})["error"]["code"] == NOT_FOUND
    # Even a grant smuggled straight into the table does not open it.
    with service.store.transaction() as conn:
        conn.execute("INSERT INTO grants VALUES ('assistant','agent','assistant/alice',1,1,'2026-01-01T00:00:00.000000Z','attacker')")
    assert other_user.call_tool("memory_get", {"record_id": note["record_id"]})["error"]["code"] == NOT_FOUND


def test_write_targets_cannot_name_scopes(world):
    service, alice, bob, coder, records = world
    for target in ("user:bob", "project:atlas", "agent:assistant/bob", "org:acme", "../bob"):
        result = alice.call_tool("memory_write", {"type": "semantic", "content": "x", "attribute": "a", "target": target})
        assert result["error"]["code"] == "invalid_input"


def test_entity_resolution_never_links_to_an_unreadable_entity(world):
    service, alice, bob, coder, records = world
    bob_entity = service.record(records["bob"]).subject_entity_id
    linked = alice.call_tool("memory_write", {"type": "semantic", "content": "bob is alice's neighbour.", "attribute": "neighbour", "about": "bob", "about_kind": "person"})
    assert service.record(linked["record_id"]).subject_entity_id != bob_entity


def test_merge_of_an_invisible_entity_looks_absent(world):
    service, alice, bob, coder, records = world
    bob_entity = service.record(records["bob"]).subject_entity_id
    alice_entity = service.record(records["alice"]).subject_entity_id
    result = alice.call_tool("memory_revise", {"action": "merge_entities", "source_entity_id": bob_entity, "target_entity_id": alice_entity, "reason": "x"})
    assert result["error"]["code"] == NOT_FOUND
    assert service.entity(bob_entity)["status"] != "merged"
