import sqlite3

from hypothesis import given, settings, strategies as st

from memory_core.errors import InvalidInputError
from memory_core.policy import parse_scope, resolve_access, validate_id
from memory_core.store.migrations import migrate

ids = st.sampled_from(["alice", "bob", "carol", "bot", "coder", "atlas", "acme"])
scope_kinds = st.sampled_from(["user", "project", "org", "agent", "private"])


def scope_text(kind: str, ident: str, other: str) -> str:
    return f"agent:{ident}/{other}" if kind == "private" else f"{kind}:{ident}"


grant_rows = st.lists(st.tuples(ids, scope_kinds, ids, ids, st.booleans(), st.booleans()), max_size=12)


@settings(max_examples=150, deadline=None)
@given(rows=grant_rows, agent=ids, user=ids)
def test_readable_scopes_follow_the_rules_exactly(rows, agent, user):
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.row_factory = sqlite3.Row
    migrate(conn, "2026-01-01T00:00:00.000000Z")
    expected_read = {f"agent:{agent}/{user}"}
    expected_write = {f"agent:{agent}/{user}"}
    seen = set()
    for grantee, kind, ident, other, read, write in rows:
        scope = parse_scope(scope_text(kind, ident, other))
        if (grantee, scope.key) in seen:
            continue
        seen.add((grantee, scope.key))
        conn.execute("INSERT INTO grants VALUES (?,?,?,?,?, '2026', 't')", (grantee, scope.kind, scope.id, int(read), int(write)))
        if grantee != agent or scope.is_private or (scope.kind == "user" and scope.id != user):
            continue
        if read:
            expected_read.add(scope.key)
        if write:
            expected_write.add(scope.key)
    access = resolve_access(conn, agent, user)
    assert set(access.readable) == expected_read
    assert set(access.writable) == expected_write
    # Never another user's private or personal scope.
    for key in access.readable:
        scope = parse_scope(key)
        if scope.is_private:
            assert scope.private_parts == (agent, user)
        if scope.kind == "user":
            assert scope.id == user
    for key, reason in {**access.readable, **access.ignored}.items():
        assert reason


@given(st.text(min_size=1, max_size=40))
def test_ids_with_forbidden_characters_never_validate(text):
    bad = any(ch in text for ch in "/: \t\n") or len(text) > 128
    try:
        validate_id(text)
    except InvalidInputError:
        return
    assert not bad
