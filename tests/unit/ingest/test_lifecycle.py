import pytest
from tests.helpers import write_result as write


def test_revise_update_creates_a_new_version_and_keeps_lineage(alice, service):
    made = write(alice, type="semantic", content="The user drinks two coffees a day.", attribute="coffee")
    revised = alice.call_tool("memory_revise", {"action": "update", "record_id": made["record_id"],
                                                "content": "The user drinks one coffee a day.", "reason": "user corrected"})
    assert revised["ok"] and revised["superseded"] == [made["record_id"]]
    lineage = service.lineage(revised["record_id"])
    assert [r.version for r in lineage] == [1, 2]
    assert [r.status for r in lineage] == ["superseded", "provisional"]
    assert lineage[1].subject == lineage[0].subject


def test_lower_rank_revision_of_a_user_statement_is_refused(alice, service):
    alice.record_turn("user", "I am vegetarian.")
    made = write(alice, type="semantic", content="The user is vegetarian.", attribute="diet", source_kind="user_statement", evidence="I am vegetarian.")
    before = service.store.scalar("SELECT COUNT(*) FROM records")
    result = alice.call_tool("memory_revise", {"action": "update", "record_id": made["record_id"], "content": "The user eats fish.", "reason": "guess"})
    assert result["error"]["code"] == "policy_refused"
    assert service.store.scalar("SELECT COUNT(*) FROM records") == before
    assert service.record(made["record_id"]).status == "confirmed"


def test_episodic_records_are_never_superseded(alice):
    made = write(alice, type="episodic", content="The user visited Lisbon.", event_at="2026-01-10")
    result = alice.call_tool("memory_revise", {"action": "update", "record_id": made["record_id"], "content": "The user visited Porto.", "reason": "x"})
    assert result["error"]["code"] == "policy_refused"


def test_confirm_from_another_session_promotes_only_with_evidence(service):
    # Issue 11 changed this: an agent confirming its own unevidenced guess in a later session is
    # not an independent observation; a quote from the user in that session is.
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    first = service.start_session(agent_id="assistant", user_id="alice")
    made = write(first, type="semantic", content="The user is training for a marathon.", attribute="training")
    same = first.call_tool("memory_revise", {"action": "confirm", "record_id": made["record_id"], "reason": "mentioned again"})
    assert same["status"] == "provisional"  # the same session is not an independent observation
    later = service.start_session(agent_id="assistant", user_id="alice")
    guess = later.call_tool("memory_revise", {"action": "confirm", "record_id": made["record_id"], "reason": "I still think so"})
    assert guess["status"] == "provisional" and guess["expires_at"] is not None
    later.record_turn("user", "Yes, I'm training for the Berlin marathon.")
    confirmed = later.call_tool("memory_revise", {"action": "confirm", "record_id": made["record_id"], "reason": "the user said so",
                                                  "evidence": "I'm training for the Berlin marathon"})
    assert confirmed["status"] == "confirmed" and confirmed["expires_at"] is None


def test_reviewer_edit_keeps_source_and_evidence(alice, service):
    alice.record_turn("user", "My favourite editor is Helix.")
    made = write(alice, type="semantic", content="The user's favourite editor is Helix.", attribute="editor",
                 source_kind="user_statement", evidence="My favourite editor is Helix.")
    record = service.record(made["record_id"])
    outcome = service.revise(None, record, content="The user's favourite text editor is Helix.", reason="wording", actor="reviewer:rita")
    new = outcome.record
    assert new.source_kind == "user_statement" and new.evidence == "My favourite editor is Helix." and new.version == 2
    assert service.record(made["record_id"]).status == "superseded"


@pytest.mark.sqlite_only
def test_merge_entities_repoints_links_subjects_and_fts(service):
    service.grant("assistant", "project:atlas", read=True, write=True, actor="t")
    session = service.start_session(agent_id="assistant", user_id="alice", project_id="atlas")
    a = write(session, type="semantic", content="Project Atlas launches in June.", attribute="launch", target="current_project", about="Project Atlas", about_kind="project")
    b = write(session, type="semantic", content="Atlas project uses Postgres.", attribute="database", target="current_project", about="Atlas project", about_kind="project")
    source = service.record(b["record_id"]).subject_entity_id
    target = service.record(a["record_id"]).subject_entity_id
    assert source != target
    preview = service.lifecycle.merge_preview(source, target)
    assert [c["record_id"] for c in preview["subject_changes"]] == [b["record_id"]]
    assert preview["aliases_moved"] == ["Atlas project"]
    result = session.call_tool("memory_revise", {"action": "merge_entities", "source_entity_id": source, "target_entity_id": target, "reason": "same project"})
    assert result["ok"], result
    moved = service.record(b["record_id"])
    assert moved.subject_entity_id == target and moved.subject == f"{target}:database"
    assert service.entity(source)["status"] == "merged"
    assert "Atlas project" in service.entity(target)["aliases"]
    seq = moved.seq
    fts = service.store.query_one("SELECT subject, aliases FROM records_fts WHERE rowid = ?", (seq,))
    assert "Project Atlas" in fts["subject"] and "Atlas project" in fts["aliases"]
    assert service.store.query_one("SELECT kind FROM events WHERE kind = 'entity.merged'")


def test_merge_across_scopes_is_refused(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    service.grant("assistant", "project:atlas", read=True, write=True, actor="t")
    session = service.start_session(agent_id="assistant", user_id="alice", project_id="atlas")
    personal = write(session, type="semantic", content="Sam is the user's friend.", attribute="relation", about="Sam", about_kind="person")
    project = write(session, type="semantic", content="Samuel leads Atlas QA.", attribute="role", target="current_project", about="Samuel", about_kind="person")
    result = session.call_tool("memory_revise", {"action": "merge_entities",
                                                 "source_entity_id": service.record(project["record_id"]).subject_entity_id,
                                                 "target_entity_id": service.record(personal["record_id"]).subject_entity_id, "reason": "x"})
    assert result["error"]["code"] == "conflict"


def test_clear_review_flag_is_audited(alice, service):
    made = write(alice, type="semantic", content="The user plans a trip to Kyoto in April.", attribute="trip", review_at="2026-05-01")
    with service.store.transaction() as conn:
        conn.execute("UPDATE records SET review_flagged_at = ?, review_reason = 'review date passed' WHERE id = ?", ("2026-05-01T00:00:00.000000Z", made["record_id"]))
    cleared = service.lifecycle.clear_review_flag(made["record_id"], actor="reviewer:rita", reason="still planned")
    assert cleared.review_flagged_at is None and cleared.review_at is None
    assert service.events_for(made["record_id"])[-1]["reason"] == "still planned"
