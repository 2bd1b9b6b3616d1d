import pytest

from memory_core.errors import InvalidInputError, PolicyError
from memory_core.policy import check_grantable, parse_scope, private_scope, resolve_access


def test_scope_parsing_and_private_detection():
    assert parse_scope("user:alice").key == "user:alice"
    assert parse_scope("agent:bot/alice").is_private
    assert not parse_scope("agent:bot").is_private
    assert private_scope("bot", "alice").key == "agent:bot/alice"
    for bad in ("user:a/b", "team:x", "user:", "user", "project:has space", "org:a:b", 42, None):
        with pytest.raises(InvalidInputError):
            parse_scope(bad)


def test_private_scope_grants_are_refused_with_a_reason(service):
    assert not check_grantable(parse_scope("agent:bot/alice"))
    with pytest.raises(PolicyError) as info:
        service.grant("bot", "agent:bot/alice", actor="t")
    assert "private" in info.value.message


def test_no_inheritance_between_scopes(service):
    service.grant("bot", "user:alice", read=True, write=False, actor="t")
    access = service.access("bot", "alice")
    assert access.can_read("user:alice")
    assert not access.can_write("user:alice")
    assert not access.can_read("project:atlas")
    assert not access.can_read("org:acme")
    assert not access.can_read("agent:bot")


def test_implicit_private_scope_only_for_the_pair(service):
    access = service.access("bot", "alice")
    assert access.can_read("agent:bot/alice") and access.can_write("agent:bot/alice")
    assert not access.can_read("agent:bot/bob")
    assert not access.can_read("agent:other/alice")


def test_stored_private_grant_for_another_user_is_ignored(service):
    with service.store.transaction() as conn:
        conn.execute("INSERT INTO grants VALUES ('bot','agent','bot/bob',1,1,'2026-01-01T00:00:00.000000Z','attacker')")
    access = resolve_access(service.store.conn, "bot", "alice")
    decision = access.can_read("agent:bot/bob")
    assert not decision
    assert "ignored" in decision.reason


def test_revoke_removes_access_and_is_audited(service):
    service.grant("bot", "project:atlas", read=True, write=True, actor="ops", reason="kickoff")
    assert service.access("bot", "alice").can_write("project:atlas")
    service.revoke("bot", "project:atlas", actor="ops", reason="done")
    assert not service.access("bot", "alice").can_read("project:atlas")
    kinds = [r["kind"] for r in service.store.query("SELECT kind FROM events ORDER BY seq")]
    assert kinds == ["grant.added", "grant.revoked"]


def test_reinforcement_promotes_only_on_independent_evidenced_observations():
    from datetime import datetime, timezone

    from memory_core.policy.rules import Observation, is_independent, plan_reinforcement

    now = datetime(2026, 3, 5, tzinfo=timezone.utc)
    base = dict(status="provisional", source_kind="agent_inference", confidence=0.5, observations=1, expires_at=None,
                last_observed_session="s1", now=now, promote_after=2, extension_days=30)
    guess_again = Observation("s2", "assistant", "agent_inference", evidenced=False)
    quoted = Observation("s2", "assistant", "agent_inference", evidenced=True)
    same_session = Observation("s1", "assistant", "agent_inference", evidenced=True)
    assert not is_independent("s1", guess_again) and not is_independent("s1", same_session) and is_independent("s1", quoted)
    plan = plan_reinforcement(observation=guess_again, **base)
    assert not plan.promoted and plan.fields["expires_at"] is not None and "last_observed_session" not in plan.fields
    assert plan_reinforcement(observation=quoted, **base).promoted
    assert plan_reinforcement(observation=Observation(None, None, "agent_inference", person=True), **base).promoted
    stronger = plan_reinforcement(observation=Observation("s1", "a", "user_statement", evidenced=True), **base)
    assert stronger.promoted and stronger.fields["source_kind"] == "user_statement"


@pytest.mark.parametrize("field", ["actor", "reason"])
def test_a_grant_or_revoke_with_unstorable_text_is_refused_and_changes_nothing(service, field):
    before = service.store.query("SELECT count(*) AS n FROM events")[0]["n"]
    args = {"actor": "ops", "reason": "kickoff", field: "ops\udc80"}
    with pytest.raises(InvalidInputError) as info:
        service.grant("bot", "project:atlas", read=True, **args)
    assert info.value.details["field"] == field
    with pytest.raises(InvalidInputError):
        service.revoke("bot", "project:atlas", **args)
    assert service.grants("bot") == []
    assert service.store.query("SELECT count(*) AS n FROM events")[0]["n"] == before
