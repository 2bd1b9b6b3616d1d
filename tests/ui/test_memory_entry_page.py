"""Records / My memory: who is offered the write and edit forms, and what a submitted form writes."""

from tests.ui.conftest import errors, service_for


def keys_of(at) -> set[str]:
    return {w.key for w in at.toggle}


def test_viewers_and_reviewers_are_not_offered_the_write_form(open_page):
    for role in ("viewer", "reviewer"):
        assert "memory_write_open" not in keys_of(open_page("records.py", role))


def test_a_user_writes_only_about_herself(open_page):
    at = open_page("records.py", "user")
    at.toggle(key="memory_write_open").set_value(True).run()
    assert "memory_write_user" not in {s.key for s in at.selectbox}  # no choice of user
    at.text_area(key="memory_write_content").input("I cycle to work.")
    at.button(key="memory_write_submit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    row = service_for(at).store.query_one("SELECT scope_kind, scope_id, source_kind, source_ref FROM records "
                                          "WHERE content = 'I cycle to work.'")
    assert dict(row) == {"scope_kind": "user", "scope_id": "alice", "source_kind": "user_statement",
                         "source_ref": "admin-app:ui:alice"}
    assert at.query_params.get("record")  # the new record is open


def test_an_operator_must_choose_the_user_and_give_a_reason(open_page):
    at = open_page("records.py", "operator")
    at.toggle(key="memory_write_open").set_value(True).run()
    at.text_area(key="memory_write_content").input("Prefers morning calls.")
    at.button(key="memory_write_submit").click().run()
    assert "choose the user" in errors(at)
    at.selectbox(key="memory_write_user").set_value("alice")
    at.button(key="memory_write_submit").click().run()
    assert "give a reason" in errors(at)
    assert service_for(at).store.scalar("SELECT COUNT(*) FROM records WHERE content = 'Prefers morning calls.'") == 0
    at.text_input(key="memory_write_reason").input("she asked on the phone")
    at.button(key="memory_write_submit").click().run()
    assert service_for(at).store.query_one("SELECT source_kind FROM records WHERE content = 'Prefers morning calls.'")[0] == "system"
