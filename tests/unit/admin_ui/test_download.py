"""Downloading memory from the app: a user gets their own scopes only, an operator any scope."""

import json

import pytest

from admin_ui.auth import Identity
from admin_ui.data import download
from memory_core.errors import InvalidInputError, PermissionDeniedError

OPERATOR = Identity("omar", "operator")
VIEWER = Identity("vera", "viewer")
ALICE = Identity("alice", "user", user_id="alice")
BOB = Identity("bob", "user", user_id="bob")


@pytest.fixture
def two_users(service, alice):
    service.grant("helper", "user:bob", read=True, write=True, actor="test")
    bob = service.start_session(agent_id="helper", user_id="bob")
    mine = alice.call_tool("memory_write", {"type": "semantic", "content": "The user likes tea.", "attribute": "drink"})
    theirs = bob.call_tool("memory_write", {"type": "semantic", "content": "Bob's bank PIN hint is his dog.", "attribute": "pin"})
    assert mine["ok"] and theirs["ok"]
    return mine["record_id"], theirs["record_id"]


def _records(made) -> list[dict]:
    lines = [json.loads(line) for line in made.data.decode().splitlines()]
    assert lines[0]["kind"] == "header" and lines[-1]["kind"] == "end"
    return [line["record"] for line in lines if line["kind"] == "record"]


def test_a_user_downloads_their_own_memory_only(service, two_users):
    mine, theirs = two_users
    assert download.downloadable_scopes(service, ALICE) == ["user:alice"]
    made = download.make_export(service, ALICE)
    assert [r["id"] for r in _records(made)] == [mine] and made.scopes == ("user:alice",) and made.records == 1
    assert "Bob" not in made.data.decode() and made.name.startswith("agent-memory-alice-")


@pytest.mark.parametrize("scopes", [["user:bob"], ["user:alice", "user:bob"], ["agent:helper/bob"], ["user:nobody"]])
def test_a_user_cannot_download_another_users_scope(service, two_users, scopes):
    with pytest.raises(PermissionDeniedError) as caught:
        download.make_export(service, ALICE, scopes)
    # the refusal reads the same whether the scope holds anything
    assert str(caught.value.message).startswith("you may not download ")


def test_a_user_cannot_ask_for_sessions_and_a_viewer_cannot_download(service, two_users):
    with pytest.raises(PermissionDeniedError):
        download.make_export(service, ALICE, sessions=True)
    with pytest.raises(PermissionDeniedError):
        download.make_export(service, VIEWER)
    assert download.downloadable_scopes(service, VIEWER) == []


def test_an_operator_downloads_any_scope(service, two_users):
    mine, theirs = two_users
    made = download.make_export(service, OPERATOR, ["user:bob"], sessions=True)
    assert [r["id"] for r in _records(made)] == [theirs] and made.sessions >= 0
    everything = download.make_export(service, OPERATOR)
    assert {r["id"] for r in _records(everything)} == {mine, theirs}


def test_a_user_with_nothing_stored_is_told_so(service, two_users):
    with pytest.raises(InvalidInputError, match="no memory to download"):
        download.make_export(service, Identity("carol", "user", user_id="carol"))
