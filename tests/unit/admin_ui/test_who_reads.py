"""A user sees which agents can read her memory and the searches made for her, and nothing of another user's."""

import pytest

from admin_ui.data import who_reads


@pytest.fixture
def two_users(service, alice):
    service.grant("helper", "user:bob", read=True, write=True, actor="ops")
    service.grant("reader", "user:alice", read=True, write=False, actor="ops")
    service.grant("reader", "project:atlas", read=True, write=False, actor="ops")
    bob = service.start_session(agent_id="helper", user_id="bob")
    assert alice.call_tool("memory_write", {"type": "semantic", "content": "The user likes tea.", "attribute": "drink"})["ok"]
    assert bob.call_tool("memory_write", {"type": "semantic", "content": "Bob hides his spare key under the mat.",
                                          "attribute": "key"})["ok"]
    alice.call_tool("memory_search", {"query": "what does the user drink"})
    bob.call_tool("memory_search", {"query": "where is Bob's spare key"})
    return alice, bob


def test_a_user_sees_the_agents_that_can_read_her_own_scopes(service, two_users):
    rows = who_reads.readers(service, "alice")
    scopes = {(r["agent"], r["scope"]) for r in rows}
    assert ("reader", "user:alice") in scopes
    assert all(r["scope"] == "user:alice" or r["scope"].endswith("/alice") for r in rows)  # her own scopes only
    assert not [r for r in rows if "bob" in r["scope"] or r["scope"].startswith("project:")]
    reader = next(r for r in rows if r["agent"] == "reader")
    assert reader["how"] == "read grant" and reader["granted by"] == "ops"


def test_a_user_sees_only_the_searches_made_for_her(service, two_users):
    page = who_reads.searches_for(service, "alice")
    assert page.total == 1 and page.items[0]["query"] == "what does the user drink"
    shown = repr(who_reads.searches_for(service, "alice").items) + repr(who_reads.readers(service, "alice"))
    assert "spare key" not in shown and "bob" not in shown.lower()


def test_a_user_nobody_reads_gets_empty_lists(service):
    assert who_reads.readers(service, "carol") == []
    assert who_reads.searches_for(service, "carol").total == 0
