"""Static checks of seed_data/ (no model needed): the files parse, the story is consistent, every
evidence quote is really in the conversation, and the demo accounts match docs/demo.md."""

import re
import tomllib
from pathlib import Path

import pytest
from argon2 import PasswordHasher

from memory_core.demo_seed import SeedError, load_seed
from memory_core.text import quote_fold as fold
from memory_core.policy.scopes import parse_scope

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "seed_data"
DOC = ROOT / "docs" / "demo.md"
ROLES = {"viewer", "reviewer", "operator", "admin", "user"}


@pytest.fixture(scope="module")
def seed():
    return load_seed(SEED)


def test_seed_loads_with_sessions_in_story_order(seed):
    starts = [s.start for s in seed.sessions]
    assert starts == sorted(starts)
    assert len(seed.sessions) >= 10
    assert {s.agent for s in seed.sessions} >= {"assistant", "coder", "researcher"}
    assert {s.user for s in seed.sessions} == {u.id for u in seed.world.users}


def test_every_scope_in_the_world_parses(seed):
    for grant in seed.world.grants:
        assert not parse_scope(grant.scope).is_private
    for gap in seed.world.grant_gaps:
        parse_scope(gap.scope)
        assert not any(g.agent == gap.agent and g.scope == gap.scope for g in seed.world.grants), gap.label


def test_evidenced_claims_quote_an_earlier_turn_of_the_right_role(seed):
    role_for = {"user_statement": "user", "tool_result": "tool"}
    for session in seed.sessions:
        turns: list[tuple[str, str]] = []
        for step in session.steps:
            if step.is_turn:
                turns.append((step.role, step.text))
                continue
            kind = step.args.get("source_kind")
            if kind in role_for:
                quote = fold(step.args["evidence"])
                assert any(role == role_for[kind] and quote in fold(text) for role, text in turns), (
                    f"{session.id}: {step.save_as or step.tool} quotes words no earlier {role_for[kind]} turn contains"
                )


def test_inferences_carry_no_evidence_claim(seed):
    for session in seed.sessions:
        for step in session.steps:
            if step.args.get("source_kind") == "agent_inference":
                assert "evidence" not in step.args, f"{session.id}: {step.save_as}"


def test_a_bad_handle_reference_is_refused(tmp_path):
    for path in [SEED / "world.toml", SEED / "searches.toml"]:
        (tmp_path / path.name).write_text(path.read_text())
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "s01.toml").write_text(
        'id = "s01"\ntitle = "t"\nagent = "assistant"\nuser = "alice"\n'
        '[[steps]]\nat = "2026-01-08T09:00:00Z"\nrole = "user"\ntext = "hello"\n'
        '[[steps]]\ntool = "memory_forget"\n[steps.args]\nrecord_id = "@nothing"\nreason = "x"\n'
    )
    with pytest.raises(SeedError, match="@nothing"):
        load_seed(tmp_path)


def test_an_unknown_key_is_refused(tmp_path):
    for path in [SEED / "world.toml", SEED / "searches.toml"]:
        (tmp_path / path.name).write_text(path.read_text())
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "s01.toml").write_text(
        'id = "s01"\ntitle = "t"\nagent = "assistant"\nuser = "alice"\ncolour = "red"\n'
        '[[steps]]\nat = "2026-01-08T09:00:00Z"\nrole = "user"\ntext = "hello"\n'
    )
    with pytest.raises(SeedError, match="colour"):
        load_seed(tmp_path)


def _documented_passwords() -> dict[str, str]:
    """Rows of the accounts table in docs/demo.md: | `username` | `password` | role | ..."""
    rows = re.findall(r"^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|", DOC.read_text(encoding="utf-8"), flags=re.M)
    return dict(rows)


def test_demo_accounts_cover_every_role_and_match_the_documented_passwords(seed):
    accounts = tomllib.loads((SEED / "demo_accounts.toml").read_text())["accounts"]
    assert {a["role"] for a in accounts} == ROLES
    documented = _documented_passwords()
    hasher = PasswordHasher()
    users = {u.id for u in seed.world.users}
    for account in accounts:
        assert set(account) <= {"username", "role", "user_id", "password_hash", "display_name"}
        assert account["username"] in documented, f"{account['username']} is not in docs/demo.md"
        assert hasher.verify(account["password_hash"], documented[account["username"]])
        if account["role"] == "user":
            assert account["user_id"] in users
        else:
            assert "user_id" not in account
