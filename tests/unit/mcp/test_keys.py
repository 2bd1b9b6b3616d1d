"""API keys: the token is returned once and stored only as its hash; revoked, unknown and malformed
tokens verify to nothing alike; bad input is refused and writes nothing."""

import pytest

from memory_core.clock import format_ts
from memory_core.errors import InvalidInputError, NotFoundError
from memory_core.mcp.keys import create_key, hash_token, list_keys, revoke_key, verify_token


def _dump(service) -> str:
    """Every value of every table, as text (to look for a token anywhere in the store)."""
    tables = [r[0] for r in service.store.query(
        "SELECT name FROM sqlite_master WHERE type = 'table'" if service.store.backend == "sqlite"
        else "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")]
    return "\n".join(repr(tuple(row)) for table in tables for row in service.store.query(f"SELECT * FROM {table}"))


def test_a_created_token_verifies_to_its_principal_and_is_stored_only_hashed(service):
    row, token = create_key(service, kind="model", agent_id="assistant", user_id="alice", project_id="atlas",
                            label="laptop", actor="test")
    assert token.startswith("am_model_") and len(token) == len("am_model_") + 43
    assert row["kind"] == "model" and row["agent_id"] == "assistant" and row["project_id"] == "atlas"
    assert "token_hash" not in row and token not in repr(row)
    key = verify_token(service, token)
    assert (key.key_id, key.kind, key.agent_id, key.user_id, key.project_id) == (row["id"], "model", "assistant", "alice", "atlas")
    dump = _dump(service)
    assert token not in dump and token[9:] not in dump  # neither the token nor its secret part
    assert hash_token(token) in dump
    assert service.store.scalar("SELECT COUNT(*) FROM events WHERE kind = 'key.created'") == 1


def test_host_and_model_tokens_differ_in_kind_and_prefix(service):
    _, model = create_key(service, kind="model", agent_id="a", user_id="u", actor="t")
    _, host = create_key(service, kind="host", agent_id="a", user_id="u", actor="t")
    assert host.startswith("am_host_")
    assert verify_token(service, model).kind == "model" and verify_token(service, host).kind == "host"


@pytest.mark.parametrize("token", [None, "", "am_model_", "am_model_" + "x" * 43, "x" * 10_000, "am_model_é" * 3,
                                   "Bearer am_model_abc", 42, b"am_model_abc", "am_model_\x00abc"])
def test_unknown_and_malformed_tokens_verify_to_nothing(service, token):
    create_key(service, kind="model", agent_id="a", user_id="u", actor="t")
    assert verify_token(service, token) is None


def test_a_revoked_token_verifies_to_nothing_and_revoking_twice_is_refused(service):
    row, token = create_key(service, kind="model", agent_id="a", user_id="u", actor="t")
    revoked = revoke_key(service, row["id"], actor="ops", reason="laptop lost")
    assert revoked["revoked_by"] == "ops" and revoked["revoke_reason"] == "laptop lost"
    assert verify_token(service, token) is None
    with pytest.raises(InvalidInputError):
        revoke_key(service, row["id"], actor="ops")
    with pytest.raises(NotFoundError):
        revoke_key(service, "key_0000000000000000", actor="ops")
    assert service.store.scalar("SELECT COUNT(*) FROM events WHERE kind = 'key.revoked'") == 1


@pytest.mark.parametrize("args", [
    {"kind": "admin", "agent_id": "a", "user_id": "u"},
    {"kind": "model", "agent_id": "a/b", "user_id": "u"},
    {"kind": "model", "agent_id": "a", "user_id": "user:u"},
    {"kind": "model", "agent_id": "a", "user_id": "u", "project_id": "p q"},
    {"kind": "model", "agent_id": "a", "user_id": "u", "label": "x" * 201},
    {"kind": "model", "agent_id": "a", "user_id": "u", "label": "lone \ud800 surrogate"},
])
def test_bad_key_requests_are_refused_and_write_nothing(service, args):
    with pytest.raises(InvalidInputError):
        create_key(service, actor="t", **args)
    assert list_keys(service) == []
    assert service.store.scalar("SELECT COUNT(*) FROM events WHERE kind LIKE 'key.%'") == 0


def test_last_use_is_written_at_most_once_per_interval(service, clock):
    row, token = create_key(service, kind="model", agent_id="a", user_id="u", actor="t")
    assert list_keys(service)[0]["last_used_at"] is None
    verify_token(service, token, touch_interval_s=60)
    first = list_keys(service)[0]["last_used_at"]
    assert first == format_ts(clock.now())
    clock.advance(seconds=30)
    verify_token(service, token, touch_interval_s=60)
    assert list_keys(service)[0]["last_used_at"] == first
    clock.advance(seconds=31)
    verify_token(service, token, touch_interval_s=60)
    assert list_keys(service)[0]["last_used_at"] == format_ts(clock.now())


def test_the_list_is_newest_first_and_can_leave_out_revoked_keys(service, clock):
    old, _ = create_key(service, kind="model", agent_id="a", user_id="u", actor="t")
    clock.advance(seconds=1)
    new, _ = create_key(service, kind="host", agent_id="a", user_id="u", actor="t")
    revoke_key(service, old["id"], actor="t")
    assert [r["id"] for r in list_keys(service)] == [new["id"], old["id"]]
    assert [r["id"] for r in list_keys(service, include_revoked=False)] == [new["id"]]

