import pytest

from admin_ui.auth import Identity
from admin_ui.sessions import COOKIE_NAME, SIGNED_OUT, SignInStore, cookie_script

ALICE = Identity("alice", "user", user_id="alice")


class Ticker:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_token_finds_its_identity_until_it_expires_or_is_dropped():
    clock = Ticker()
    store = SignInStore(ttl_s=60, clock=clock)
    token = store.create(ALICE)
    assert len(token) >= 40 and store.get(token) == ALICE
    other = store.create(ALICE)
    assert other != token
    store.drop(other)
    assert store.get(other) is None
    clock.now += 61
    assert store.get(token) is None


@pytest.mark.parametrize("token", [None, "", SIGNED_OUT, "made-up-token", "' OR 1=1"])
def test_unknown_tokens_and_the_signed_out_marker_find_nobody(token):
    store = SignInStore()
    store.create(ALICE)
    assert store.get(token) is None


def test_the_cookie_script_only_carries_url_safe_values():
    assert f"{COOKIE_NAME}=abc-_1;" in cookie_script("abc-_1")
    for hostile in ("a;b", "a'b", "<script>", "a b"):
        with pytest.raises(ValueError):
            cookie_script(hostile)
