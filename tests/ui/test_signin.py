"""Sign-in: local accounts with argon2 hashes, per-role navigation, and the localhost-only demo."""

import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

from admin_ui.auth import hash_password
from tests.ui.conftest import APP, errors, page_file, shown_text


@pytest.fixture
def accounts_file(tmp_path, monkeypatch, ui_store):
    path = tmp_path / "accounts.toml"
    path.write_text(
        "[[accounts]]\nusername = \"rita\"\nrole = \"reviewer\"\n"
        f"password_hash = \"{hash_password('rita-pass')}\"\n\n"
        "[[accounts]]\nusername = \"alice\"\nrole = \"user\"\nuser_id = \"alice\"\n"
        f"password_hash = \"{hash_password('alice-pass')}\"\n"
    )
    monkeypatch.setenv("MEMORY_UI__ACCOUNTS_FILE", str(path))
    return path


@pytest.fixture
def server_address():
    before = config.get_option("server.address")

    def set_address(value):
        config.set_option("server.address", value)

    yield set_address
    config.set_option("server.address", before)


def sign_in(at, username, password):
    at.text_input(key="signin_username").input(username)
    at.text_input(key="signin_password").input(password)
    at.button(key="signin_submit").click().run()
    return at


def test_nobody_sees_a_page_before_signing_in(accounts_file):
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert at.title[0].value == "Sign in to agent-memory"
    with pytest.raises(ValueError):
        at.switch_page(page_file("records.py"))


def test_a_wrong_password_is_refused(accounts_file):
    at = sign_in(AppTest.from_file(APP, default_timeout=30).run(), "rita", "nope")
    assert "wrong password" in errors(at)
    assert "identity" not in at.session_state


def test_a_reviewer_signs_in_and_gets_the_staff_pages(accounts_file):
    at = sign_in(AppTest.from_file(APP, default_timeout=30).run(), "rita", "rita-pass")
    assert not at.exception
    assert at.session_state["identity"].role == "reviewer"
    assert at.title[0].value == "Overview"
    at.switch_page(page_file("review_queue.py")).run()
    assert at.title[0].value == "Review queue"


def test_a_user_account_gets_only_their_own_memory(accounts_file):
    at = sign_in(AppTest.from_file(APP, default_timeout=30).run(), "alice", "alice-pass")
    assert at.title[0].value == "My memory"
    for page in ("overview.py", "search_explorer.py", "grants.py", "logs.py"):
        with pytest.raises(ValueError):
            at.switch_page(page_file(page))


def test_demo_mode_signs_in_the_demo_operator_only_on_localhost(accounts_file, server_address, monkeypatch):
    monkeypatch.setenv("MEMORY_UI__DEMO_MODE", "true")
    server_address("127.0.0.1")
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert at.session_state["identity"].username == "demo-operator"
    assert at.session_state["identity"].role == "operator"

    server_address("0.0.0.0")
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert "identity" not in at.session_state
    assert any("Demo sign-in is off" in t and "0.0.0.0" in t for t in shown_text(at))


def test_signing_out_does_not_sign_the_demo_operator_back_in(accounts_file, server_address, monkeypatch):
    monkeypatch.setenv("MEMORY_UI__DEMO_MODE", "true")
    server_address("localhost")
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert at.session_state["identity"].username == "demo-operator"
    # AppTest drops the sidebar of a st.navigation app after its first run, so the state the
    # Sign out button leaves (see admin_ui.signin.sign_out) is set directly; e2e clicks the button.
    del at.session_state["identity"]
    at.session_state["_signed_out"] = True
    at.run()
    at.run()
    assert "identity" not in at.session_state


def test_no_sign_in_configured_explains_how(ui_store):
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert any("No sign-in is configured" in t for t in shown_text(at))


def test_the_demo_sign_in_page_lists_the_packaged_accounts_with_their_published_passwords(ui_store, server_address,
                                                                                          monkeypatch):
    from memory_core.app_launch import DEMO_ACCOUNTS

    monkeypatch.setenv("MEMORY_UI__DEMO_MODE", "true")
    monkeypatch.setenv("MEMORY_UI__ACCOUNTS_FILE", str(DEMO_ACCOUNTS))
    server_address("0.0.0.0")  # demo mode on a shared address: nobody is signed in automatically
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    listing = next(d.value for d in at.dataframe if "password" in d.value.columns)
    rows = {r["username"]: (r["role"], r["password"]) for _, r in listing.iterrows()}
    assert rows["alice"] == ("user", "alice-demo-2026")
    assert rows["operator"] == ("operator", "operator-demo-2026")



@pytest.fixture
def sign_in_routes(monkeypatch):
    """The sign-in store the server's routes would share with the script (entry/app.py installs it)."""
    from admin_ui.auth import routes as session_routes
    from memory_core.settings import UISettings

    monkeypatch.setattr(session_routes, "_STORE", None)  # put back (None) when the test ends
    return session_routes.install(UISettings()).store


def test_a_sign_in_ended_elsewhere_ends_here_on_the_next_run(accounts_file, sign_in_routes):
    at = sign_in(AppTest.from_file(APP, default_timeout=30).run(), "rita", "rita-pass")
    assert at.title[0].value == "Overview"
    sign_in_id = at.session_state["_sign_in"]
    assert sign_in_routes.check(sign_in_id).sign_in.identity.username == "rita"
    sign_in_routes.end(sign_in_id)  # what Sign out in another tab does
    at.run()
    assert at.title[0].value == "Sign in to agent-memory"
    assert "identity" not in at.session_state
    assert any("You are signed out" in t for t in shown_text(at))


def test_without_the_routes_a_sign_in_lasts_the_session_and_the_page_says_so(accounts_file):
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert any("without the sign-in routes" in t for t in shown_text(at))
    at = sign_in(at, "rita", "rita-pass")
    assert at.title[0].value == "Overview" and "_sign_in" not in at.session_state
