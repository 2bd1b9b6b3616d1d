from admin_ui.data.entities import edit_distance, name_key, propose_merges


def entity(id, name, scope="project:atlas", kind="project", aliases=(), status="provisional", records=0, created="2026-01-01"):
    return {"id": id, "name": name, "scope": scope, "kind": kind, "aliases": list(aliases), "status": status,
            "records": records, "created_at": created}


def pairs(proposals):
    return {(p.source["id"], p.target["id"]) for p in proposals}


def test_names_equal_but_for_case_and_punctuation_are_proposed():
    found = propose_merges([entity("a", "Project Atlas"), entity("b", "project-atlas")])
    assert len(found) == 1 and "ignoring case" in found[0].reasons[0]


def test_a_shared_alias_in_one_scope_is_proposed():
    found = propose_merges([entity("a", "Robert Okafor", kind="person", aliases=["Bob"]),
                            entity("b", "Bob", kind="person")])
    assert any("same alias 'bob'" in r for r in found[0].reasons)


def test_a_small_edit_distance_is_proposed_but_short_names_are_not():
    assert propose_merges([entity("a", "Northwind Labs"), entity("b", "Northwnd Labs")])
    assert not propose_merges([entity("a", "Ann"), entity("b", "Anna")])


def test_different_scopes_are_never_proposed():
    assert not propose_merges([entity("a", "Sam", "user:alice", "person"), entity("b", "Sam", "user:bob", "person")])


def test_merged_entities_and_incompatible_kinds_are_skipped():
    assert not propose_merges([entity("a", "Atlas"), entity("b", "Atlas", status="merged")])
    assert not propose_merges([entity("a", "Atlas", kind="project"), entity("b", "Atlas", kind="person")])
    assert propose_merges([entity("a", "Atlas", kind="project"), entity("b", "Atlas", kind="other")])


def test_the_confirmed_better_linked_older_entity_is_kept():
    keep = entity("z", "Atlas", status="confirmed")
    assert pairs(propose_merges([keep, entity("a", "atlas", records=9)])) == {("a", "z")}
    assert pairs(propose_merges([entity("a", "Atlas", records=1), entity("b", "atlas", records=5)])) == {("a", "b")}
    assert pairs(propose_merges([entity("a", "Atlas", created="2026-02-01"), entity("b", "atlas", created="2026-01-01")])) == {("a", "b")}


def test_edit_distance_and_name_key():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("abc", "abcdefgh", limit=2) == 3
    assert name_key("  Café-Au Lait! ") == "cafeaulait"


def test_reordered_words_and_contained_names_are_proposed():
    found = propose_merges([entity("a", "Project Atlas"), entity("b", "Atlas project"), entity("c", "Atlas", kind="other")])
    reasons = {frozenset((p.source["id"], p.target["id"])): p.reasons for p in found}
    assert "the same words in another order" in reasons[frozenset("ab")]
    assert any("every word of 'Atlas'" in r for r in reasons[frozenset("ac")])
    assert not propose_merges([entity("a", "Al"), entity("b", "Al Smith")])
