from admin_ui.data.pagination import page_bounds, paginate
from admin_ui.data.records import RecordFilter, list_records
from tests.helpers import write


def test_pages_are_clamped():
    assert page_bounds(0, 10, 35) == (1, 0)
    assert page_bounds(9, 10, 35) == (4, 30)
    assert page_bounds(3, 10, 0) == (1, 0)
    page = paginate(list(range(35)), 4, 10)
    assert page.items == [30, 31, 32, 33, 34] and page.pages == 4 and page.caption("rows").startswith("Rows 31–35 of 35")


def test_text_filter_treats_like_wildcards_literally(service, alice):
    write(alice, "Discount is 50% off", attribute="discount")
    write(alice, "Discount is 50 dollars off", attribute="discount2")
    page = list_records(service, RecordFilter(text="50%"))
    assert [r.content for r in page.items] == ["Discount is 50% off"]


def test_owner_filter_keeps_only_the_users_scopes(service, alice):
    mine = write(alice, "Alice likes tea", attribute="drink")
    service.grant("assistant", "project:p1", read=True, write=True, actor="t")
    session = service.start_session(agent_id="assistant", user_id="alice", project_id="p1")
    write(session, "Project p1 uses Go", attribute="lang", target="current_project", about="p1", about_kind="project")
    ids = [r.id for r in list_records(service, RecordFilter(owner_user_id="alice")).items]
    assert ids == [mine]
    assert not list_records(service, RecordFilter(owner_user_id="al")).items


def test_facet_counts_leave_out_their_own_condition(service, alice):
    from admin_ui.data.records import RecordFilter, facet_counts

    alice.call_tool("memory_write", {"type": "semantic", "content": "The user likes tea.", "attribute": "drink"})
    alice.call_tool("memory_write", {"type": "procedural", "content": "Answer in bullet points.", "attribute": "style"})
    flt = RecordFilter(types=["semantic"])
    assert facet_counts(service, flt, "type") == {"semantic": 1, "procedural": 1}
    assert sum(facet_counts(service, flt, "status").values()) == 1
    assert facet_counts(service, RecordFilter(owner_user_id="bob"), "scope") == {}
