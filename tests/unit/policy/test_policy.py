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
