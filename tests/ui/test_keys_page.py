"""Keys page: the list with last use, a new key's token shown once (and kept nowhere), revoking with
a confirmation, and the roles that may do each."""

from memory_core.mcp.keys import create_key, verify_token
from tests.ui.conftest import errors, frames_with, service_for, shown_text


def _create(at, kind="model", agent="assistant", user="alice", reason="alice's laptop"):
    at.selectbox(key="key_create_kind").select(kind)
    at.text_input(key="key_create_agent").input(agent)
    at.text_input(key="key_create_user").input(user)
    at.text_input(key="key_create_label").input("laptop")
    at.text_input(key="key_create_reason").input(reason)
    at.button(key="key_create_submit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_new_keys_token_is_shown_once_works_and_is_kept_nowhere(open_page):
    at = _create(open_page("keys.py", "operator"))
    tokens = [c.value for c in at.code if c.value.startswith("am_model_")]
    assert len(tokens) == 1
    token = tokens[0]
    service = service_for(at)
    key = verify_token(service, token)
    assert (key.kind, key.agent_id, key.user_id) == ("model", "assistant", "alice")
    event = service.store.query_one("SELECT actor, reason FROM events WHERE kind = 'key.created' ORDER BY seq DESC LIMIT 1")
    assert (event["actor"], event["reason"]) == ("ui:omar", "alice's laptop")
    state = at.session_state
    assert not any(token in repr(state[k]) for k in state)  # not kept for a later run
    at.toggle(key="keys_show_revoked").set_value(False).run()  # any next interaction: the token is gone
    assert not any(token in text for text in shown_text(at))
    frame = frames_with(at, "key", "kind", "agent", "user", "last_used_at")[0]
    assert list(frame["key"]) == [key.key_id] and list(frame["label"]) == ["laptop"]
    assert "token" not in " ".join(frame.columns) and token not in frame.to_csv()


def test_the_list_shows_last_use_and_revocation(open_page):
    at = open_page("keys.py", "operator")
    service = service_for(at)
    used, token = create_key(service, kind="host", agent_id="assistant", user_id="alice", actor="cli")
    verify_token(service, token)
    at.run()
    frame = frames_with(at, "key", "last_used_at", "state")[0].set_index("key")
    assert frame.loc[used["id"], "state"] == "live" and frame.loc[used["id"], "last_used_at"] is not None


def test_revoking_needs_a_confirmation_and_then_refuses_the_token(open_page):
    at = open_page("keys.py", "admin")
    service = service_for(at)
    row, token = create_key(service, kind="model", agent_id="assistant", user_id="alice", actor="cli")
    at.run()
    at.selectbox(key="key_revoke_choice").select(row["id"])
    at.text_input(key="key_revoke_reason").input("laptop stolen")
    at.button(key="key_revoke_submit").click().run()
    assert "confirmation" in errors(at) and verify_token(service, token) is not None
    at.checkbox(key="key_revoke_confirm").check()
    at.button(key="key_revoke_submit").click().run()
    assert verify_token(service, token) is None
    assert any("now gets 401" in t for t in shown_text(at))
    assert frames_with(at, "key", "state")[0].set_index("key").loc[row["id"], "state"] == "revoked"


def test_a_bad_request_is_refused_and_creates_nothing(open_page):
    at = _create(open_page("keys.py", "operator"), agent="not/an id")
    assert "agent_id" in errors(at)
    assert not [c for c in at.code if c.value.startswith("am_")]
    assert service_for(at).store.scalar("SELECT COUNT(*) FROM api_keys") == 0


def test_only_operators_and_admins_may_open_the_keys_page(open_page):
    from streamlit.testing.v1 import AppTest

    from admin_ui.views.navigation import page_specs
    from tests.ui.conftest import ROLES, page_file

    open_page("overview.py", "operator")  # the test store and its settings, as the app opens them
    for role, allowed in (("viewer", False), ("reviewer", False), ("user", False), ("operator", True), ("admin", True)):
        assert ("keys" in [url for *_, url in page_specs(ROLES[role])]) is allowed, role
        if allowed:
            continue
        at = AppTest.from_file(page_file("keys.py"), default_timeout=30)  # the script run directly, past the menu
        at.session_state["identity"] = ROLES[role]
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert any("cannot open Keys" in w.value for w in at.warning)
        assert not list(at.dataframe) and not list(at.button)  # no list, no form
