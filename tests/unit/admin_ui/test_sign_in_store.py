"""The server's sign-in store: grants, tokens that rotate, theft detection, ends that reach every session."""

import pytest

from admin_ui.auth import Identity
from admin_ui.auth.sign_in_store import (
    IDLE, OTHER_BROWSER, REUSED, SIGNED_OUT, SIGNED_OUT_REASON, UNKNOWN, SignInStore, is_token,
)

ALICE = Identity("alice", "user", user_id="alice")
CHROME = "Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0"
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0"


class Ticker:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Ticker()


@pytest.fixture
def told():
    return []


@pytest.fixture
def store(clock, told):
    return SignInStore(ttl_s=3600, idle_s=600, clock=clock, on_end=lambda sessions: told.append(set(sessions)))


def signed_in(store, session="tab-1"):
    """A sign-in whose first token the browser holds (claimed) and has presented once (confirmed)."""
    sign_in = store.start(ALICE, CHROME)
    store.bind(sign_in.id, session)
    token, max_age = store.claim(store.grant(sign_in.id), CHROME)
    assert is_token(token) and max_age == 3600
    assert store.resume(token, CHROME, session).sign_in is sign_in
    return sign_in, token


def test_a_grant_is_single_use_short_lived_and_for_one_browser(store, clock):
    sign_in = store.start(ALICE, CHROME)
    grant = store.grant(sign_in.id)
    assert store.grant_pending(grant)
    assert store.claim(grant, FIREFOX) is None  # another browser cannot claim it, and it is spent
    assert store.claim(grant, CHROME) is None
    late = store.grant(sign_in.id)
    clock.now += 61
    assert not store.grant_pending(late) and store.claim(late, CHROME) is None
    fresh = store.grant(sign_in.id)
    assert store.claim(fresh, CHROME) is not None and not store.grant_pending(fresh)


def test_a_page_load_rotates_the_token_and_the_old_one_then_dies(store, told):
    sign_in, first = signed_in(store)
    second, _ = store.rotate(first, CHROME)
    assert second != first
    # Until the browser uses the new token, a second load with the old one gets the same new one
    # (two tabs loading at once), not a theft alarm.
    assert store.rotate(first, CHROME)[0] == second
    assert store.resume(second, CHROME, "tab-2").sign_in is sign_in
    # Now the old token coming back means a copy of it is in use elsewhere: the sign-in ends for all.
    assert store.resume(first, CHROME, "tab-3") .sign_in is None
    assert sign_in.ended == REUSED
    assert told == [{"tab-1", "tab-2"}]
    assert store.resume(second, CHROME, "tab-1").reason == REUSED


def test_a_copy_used_first_ends_the_sign_in_when_the_owner_comes_back(store, told):
    sign_in, token = signed_in(store)
    thief, _ = store.rotate(token, CHROME)  # the copy loads a page first
    assert store.resume(thief, CHROME, "thief").sign_in is sign_in
    assert store.rotate(token, CHROME) is None  # the owner's next load presents the replaced token
    assert sign_in.ended == REUSED and told == [{"tab-1", "thief"}]


def test_a_token_is_refused_in_another_browser_without_ending_the_sign_in(store):
    sign_in, token = signed_in(store)
    refused = store.resume(token, FIREFOX, "elsewhere")
    assert refused.sign_in is None and refused.reason == OTHER_BROWSER
    assert store.rotate(token, FIREFOX) is None
    assert sign_in.ended is None and store.check(sign_in.id).sign_in is sign_in


def test_signing_out_ends_every_session_but_the_one_signing_out_and_says_why_later(store, told):
    sign_in, token = signed_in(store)
    store.bind(sign_in.id, "tab-2")
    assert store.end(sign_in.id, here="tab-1") == {"tab-2"}
    assert told == [{"tab-2"}]
    assert store.check(sign_in.id).reason == SIGNED_OUT_REASON
    assert store.resume(token, CHROME, "tab-3").reason == SIGNED_OUT_REASON
    assert not store.live(token) and store.rotate(token, CHROME) is None
    assert store.end(sign_in.id) == set()  # ending twice tells nobody again


def test_idle_and_absolute_lifetimes(store, clock):
    sign_in, token = signed_in(store)
    clock.now += 599
    assert store.check(sign_in.id).sign_in is sign_in  # activity: the idle clock starts again
    clock.now += 599
    assert store.check(sign_in.id, active=False).sign_in is sign_in
    clock.now += 2
    assert store.check(sign_in.id).reason == IDLE
    other, token2 = signed_in(store)
    for _ in range(6):
        clock.now += 599
        assert store.check(other.id).sign_in is other
    clock.now += 599  # 3594 s of activity... and past the hour the sign-in may last
    assert store.check(other.id).sign_in is None and not store.live(token2)


@pytest.mark.parametrize("token", [None, "", SIGNED_OUT, "made-up-token", "' OR 1=1", "x" * 43])
def test_unknown_tokens_and_the_signed_out_marker_find_nobody(store, token):
    signed_in(store)
    resumed = store.resume(token, CHROME, "tab")
    assert resumed.sign_in is None
    assert resumed.reason in (None, UNKNOWN, SIGNED_OUT_REASON)
    assert store.rotate(token, CHROME) is None and not store.live(token)


def test_only_issued_values_look_like_tokens():
    assert not is_token("abc") and not is_token("a;b" * 15) and not is_token(None) and not is_token("x" * 44)


def test_only_a_signed_out_or_unknown_cookie_may_become_the_marker(store, clock):
    """The clear route's rule: the marker replaces a cookie only when it says no less than the cookie."""
    sign_in, token = signed_in(store)
    assert not store.clearable(token)  # live
    for unknown in (None, "", SIGNED_OUT, "x" * 43):
        assert store.clearable(unknown)
    store.end(sign_in.id)
    assert store.clearable(token)  # signed out: the marker says just that
    stolen, first = signed_in(store, "tab-2")
    copied, _ = store.rotate(first, CHROME)
    store.resume(copied, CHROME, "copy")
    assert store.rotate(first, CHROME) is None and stolen.ended == REUSED
    assert not store.clearable(first) and not store.clearable(copied)  # both still lead to the reason
    assert store.resume(first, CHROME, "reloaded").reason == REUSED
    idle, idle_token = signed_in(store, "tab-3")
    clock.now += 601
    assert not store.clearable(idle_token)  # over but not yet told: the next load ends it and says why
    assert store.resume(idle_token, CHROME, "tab-4").reason == IDLE and not store.clearable(idle_token)
    clock.now += 3600  # past every sign-in's lifetime: purged at the next start, then unknown
    store.start(ALICE, CHROME)
    assert store.clearable(first) and store.clearable(idle_token)
