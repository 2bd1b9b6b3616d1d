"""Entities page: merge proposals with an exact preview, audited approval, entity details."""

from tests.ui.conftest import frames_with, service_for, shown_text


def atlas_entities(service):
    return {r["canonical_name"]: r["id"] for r in service.store.query(
        "SELECT id, canonical_name FROM entities WHERE scope_kind = 'project'")}


def test_an_operator_previews_and_approves_a_proposed_merge(open_page, ui_store):
    _, ids = ui_store
    at = open_page("entities.py", "operator")
    proposals = frames_with(at, "merge", "into", "why")[0]
    assert len(proposals) == 1 and proposals["scope"][0] == "project:atlas"
    key = f"{proposals['source_id'][0]}->{proposals['target_id'][0]}"
    at.selectbox(key="entities_proposal").select(key).run()
    relinked = frames_with(at, "record_id", "role", "content")[0]
    assert len(relinked) == 1
    at.text_input(key="merge_reason").input("same project, two spellings")
    at.checkbox(key="merge_confirm").check()
    at.button(key="merge_submit").click().run()
    assert not at.exception
    service = service_for(at)
    source, target = proposals["source_id"][0], proposals["target_id"][0]
    assert service.entity(source)["status"] == "merged"
    linked = {r["record_id"] for r in service.store.query("SELECT record_id FROM record_entities WHERE entity_id = ?", (target,))}
    assert {ids["atlas1"], ids["atlas2"]} <= linked
    event = service.store.query_one("SELECT actor, reason FROM events WHERE kind = 'entity.merged'")
    assert (event["actor"], event["reason"]) == ("ui:omar", "same project, two spellings")
    assert any("No merge proposals" in t for t in shown_text(at))


def test_same_alias_in_two_users_scopes_is_shown_but_never_proposed(open_page):
    at = open_page("entities.py", "viewer")
    proposals = frames_with(at, "merge", "into", "why")[0]
    assert "Sam" not in set(proposals["merge"]) | set(proposals["into"])
    service = service_for(at)
    sam = service.store.query_one("SELECT id FROM entities WHERE canonical_name = 'Sam' AND scope_id = 'alice'")["id"]
    at.text_input(key="entities_text").input("Sam").run()
    at.selectbox(key="entities_selected").select(sam).run()
    elsewhere = frames_with(at, "alias", "scope", "name")[0]
    assert set(elsewhere["scope"]) == {"user:bob"}


def test_a_viewer_sees_the_preview_but_cannot_approve(open_page):
    at = open_page("entities.py", "viewer")
    proposals = frames_with(at, "merge", "into", "why")[0]
    at.selectbox(key="entities_proposal").select(f"{proposals['source_id'][0]}->{proposals['target_id'][0]}").run()
    assert frames_with(at, "record_id", "role", "content")
    assert "merge_submit" not in {b.key for b in at.button}


def test_entity_names_render_literally(open_page):
    from tests.ui.store_builder import INJECTION

    at = open_page("entities.py", "admin")
    service = service_for(at)
    evil = service.store.query_one("SELECT id FROM entities WHERE canonical_name = ?", (INJECTION,))["id"]
    at.text_input(key="entities_text").input("onerror").run()
    at.selectbox(key="entities_selected").select(evil).run()
    assert any(t.value.startswith(INJECTION) for t in at.text)
    for body in [m.value for m in at.markdown] + [c.value for c in at.caption]:
        assert "<img" not in body and "](javascript" not in body
