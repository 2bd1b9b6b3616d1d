"""Grants page: list, add, refuse private scopes with the policy's reason, revoke, effective access."""

from tests.ui.conftest import errors, frames_with, service_for, shown_text


def test_grants_are_listed_and_filterable(open_page):
    at = open_page("grants.py", "viewer")
    frame = frames_with(at, "agent_id", "scope", "read", "write")[0]
    assert ("assistant", "project:atlas") in set(zip(frame["agent_id"], frame["scope"]))
    at.selectbox(key="grants_agent").select("helper").run()
    assert set(frames_with(at, "agent_id", "scope", "read", "write")[0]["agent_id"]) == {"helper"}


def test_an_operator_adds_a_grant_and_it_is_audited(open_page):
    at = open_page("grants.py", "operator")
    at.text_input(key="grant_add_agent").input("scheduler")
    at.text_input(key="grant_add_scope").input("user:alice")
    at.text_input(key="grant_add_reason").input("alice connected her calendar")
    at.button(key="grant_add_submit").click().run()
    assert not at.exception
    service = service_for(at)
    assert any(g["agent_id"] == "scheduler" and g["scope"] == "user:alice" for g in service.grants())
    event = service.store.query_one("SELECT actor, reason FROM events WHERE kind = 'grant.added' ORDER BY seq DESC LIMIT 1")
    assert (event["actor"], event["reason"]) == ("ui:omar", "alice connected her calendar")


def test_a_private_scope_grant_is_refused_with_the_policy_reason(open_page):
    at = open_page("grants.py", "admin")
    at.text_input(key="grant_add_agent").input("helper")
    at.text_input(key="grant_add_scope").input("agent:assistant/alice")
    at.text_input(key="grant_add_reason").input("trying")
    at.button(key="grant_add_submit").click().run()
    shown = errors(at)
    assert "private agent-user scope" in shown and "policy_refused" in shown
    assert not any(g["scope"] == "agent:assistant/alice" for g in service_for(at).grants())


def test_revoking_asks_for_confirmation(open_page):
    at = open_page("grants.py", "operator")
    at.selectbox(key="grant_revoke_choice").select("helper → user:bob")
    at.text_input(key="grant_revoke_reason").input("bob left")
    at.button(key="grant_revoke_submit").click().run()
    assert any("confirmation" in e.value for e in at.error)
    at.checkbox(key="grant_revoke_confirm").check()
    at.button(key="grant_revoke_submit").click().run()
    assert not any(g["agent_id"] == "helper" for g in service_for(at).grants())


def test_effective_access_of_a_principal_shows_each_reason(open_page):
    at = open_page("grants.py", "viewer")
    at.selectbox(key="grants_principal_agent").set_value("assistant")
    at.selectbox(key="grants_principal_user").set_value("bob").run()
    frame = frames_with(at, "scope", "reason", "ignored grant")[0].set_index("scope")
    assert frame.loc["agent:assistant/bob", "read"]
    assert frame.loc["project:atlas", "read"]
    assert not frame.loc["user:alice", "read"] and "acting for user bob" in frame.loc["user:alice", "reason"]


def test_a_viewer_cannot_change_grants(open_page):
    at = open_page("grants.py", "viewer")
    assert not {b.key for b in at.button} & {"grant_add_submit", "grant_revoke_submit"}
    assert any("read-only" in t for t in shown_text(at))
