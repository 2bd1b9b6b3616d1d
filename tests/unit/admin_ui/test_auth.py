import pytest

from admin_ui.auth.accounts import (
    PERMISSIONS, AccountsError, Identity, authenticate, demo_sign_in_allowed, hash_password, identity_for_oidc,
    load_accounts, parse_accounts,
)


@pytest.fixture(scope="module")
def accounts():
    return parse_accounts({"accounts": [
        {"username": "rita", "role": "reviewer", "password_hash": hash_password("right"), "email": "Rita@Example.com"},
        {"username": "alice", "role": "user", "user_id": "alice", "password_hash": hash_password("pw")},
        {"username": "nopass", "role": "admin"},
    ]})


def test_a_correct_password_signs_in_and_anything_else_does_not(accounts):
    assert authenticate(accounts, "rita", "right") == Identity("rita", "reviewer", None, None, "password")
    assert authenticate(accounts, "rita", "wrong") is None
    assert authenticate(accounts, "nobody", "right") is None
    assert authenticate(accounts, "nopass", "") is None


def test_oidc_maps_by_email_case_insensitively_and_unknown_people_get_nothing(accounts):
    assert identity_for_oidc(accounts, "rita@example.COM").role == "reviewer"
    assert identity_for_oidc(accounts, "stranger@example.com") is None
    assert identity_for_oidc(accounts, None) is None


@pytest.mark.parametrize("raw, message", [
    ({"username": "x", "role": "superuser"}, "role must be one of"),
    ({"username": "x", "role": "user"}, "needs the user_id"),
    ({"username": "", "role": "viewer"}, "username is required"),
    ({"username": "x", "role": "viewer", "colour": "red"}, "unknown keys"),
])
def test_malformed_accounts_are_refused(raw, message):
    with pytest.raises(AccountsError, match=message):
        parse_accounts({"accounts": [raw]})


def test_duplicate_usernames_are_refused():
    with pytest.raises(AccountsError, match="twice"):
        parse_accounts({"accounts": [{"username": "a", "role": "viewer"}, {"username": "a", "role": "admin"}]})


def test_the_shipped_demo_accounts_cover_every_role():
    from memory_core.app_launch import DEMO_ACCOUNTS

    accounts = load_accounts(DEMO_ACCOUNTS)
    assert {a.role for a in accounts.values()} == {"viewer", "reviewer", "operator", "admin", "user"}
    for name in accounts:  # passwords as published in docs/demo.md
        assert authenticate(accounts, name, f"{name}-demo-2026") is not None


def test_a_user_owns_only_their_user_scope_and_their_private_agent_scopes():
    alice = Identity("alice", "user", user_id="alice")
    assert alice.owns_scope("user:alice") and alice.owns_scope("agent:assistant/alice")
    assert not alice.owns_scope("user:bob") and not alice.owns_scope("agent:assistant/bob")
    assert not alice.owns_scope("project:atlas") and not alice.owns_scope("agent:assistant")
    assert Identity("v", "viewer").owns_scope("user:bob")


def test_viewers_and_users_hold_no_staff_mutation():
    mutations = {"review", "grant", "merge", "extract", "maintain"}
    assert not {p for p in mutations if "viewer" in PERMISSIONS[p]}
    assert not {p for p in mutations if "user" in PERMISSIONS[p]}
    assert "viewer" not in PERMISSIONS["forget"]


@pytest.mark.parametrize("demo, address, allowed", [
    (True, "127.0.0.1", True), (True, "localhost", True), (True, "::1", True),
    (True, "0.0.0.0", False), (True, None, False), (True, "10.0.0.5", False), (False, "127.0.0.1", False),
])
def test_demo_sign_in_needs_demo_mode_and_a_localhost_binding(demo, address, allowed):
    assert demo_sign_in_allowed(demo, address)[0] is allowed
