import pytest

from admin_ui.data import actions
from admin_ui.auth import Identity
from memory_core.errors import InvalidInputError, NotFoundError, PermissionDeniedError

VIEWER = Identity("vera", "viewer")
REVIEWER = Identity("rita", "reviewer")
OPERATOR = Identity("omar", "operator")
ALICE = Identity("alice", "user", user_id="alice")
BOB = Identity("bob", "user", user_id="bob")


@pytest.fixture
def record_id(alice):
    result = alice.call_tool("memory_write", {"type": "semantic", "content": "The user likes tea.", "attribute": "drink"})
    return result["record_id"]


def test_a_viewer_can_change_nothing(service, record_id):
    for call in (
        lambda: actions.forget_record(service, VIEWER, record_id, "r"),
        lambda: actions.confirm_record(service, VIEWER, record_id, "r"),
        lambda: actions.revise_record(service, VIEWER, record_id, "x", "r"),
        lambda: actions.add_grant(service, VIEWER, "a", "user:alice", True, False, "r"),
        lambda: actions.merge_entities(service, VIEWER, "e1", "e2", "r"),
        lambda: actions.reembed(service, VIEWER),
    ):
        with pytest.raises(PermissionDeniedError):
            call()
    assert service.record(record_id).status == "provisional"


def test_a_user_forgets_their_own_records_only(service, record_id):
    with pytest.raises(NotFoundError):
        actions.forget_record(service, BOB, record_id, "not mine")
    assert actions.forget_record(service, ALICE, record_id, "please forget") == [record_id]
    event = service.events_for(record_id)[-1]
    assert (event["actor"], event["reason"]) == ("ui:alice", "please forget")


def test_every_change_needs_a_reason(service, record_id):
    with pytest.raises(InvalidInputError):
        actions.confirm_record(service, REVIEWER, record_id, "  ")
    with pytest.raises(InvalidInputError):
        actions.add_grant(service, OPERATOR, "helper", "project:x", True, False, "")


def test_a_reviewer_confirm_is_audited_with_their_identity(service, record_id):
    assert actions.confirm_record(service, REVIEWER, record_id, "user said so").status == "confirmed"
    event = service.events_for(record_id)[-1]
    assert (event["kind"], event["actor"], event["reason"]) == ("record.promoted", "ui:rita", "user said so")


def test_bulk_goes_on_past_a_failure_and_reports_it(service, record_id):
    progress = []
    result = actions.bulk(service, REVIEWER, "confirm", ["mem_missing", record_id], "batch",
                          progress=lambda n, total: progress.append((n, total)))
    assert result.done == [record_id] and list(result.failed) == ["mem_missing"]
    assert progress == [(1, 2), (2, 2)]


def test_a_reviewers_edit_is_a_confirmed_reviewed_statement(service, record_id):
    outcome = actions.revise_record(service, REVIEWER, record_id, "The user likes green tea.", "asked the user")
    new = service.record(outcome.record.id)
    assert (new.status, new.source_kind, new.expires_at) == ("confirmed", "system", None)
    assert new.supersedes_id == record_id and service.record(record_id).status == "superseded"


def test_a_review_date_is_resolved_and_must_be_in_the_future(service, record_id):
    service.store.conn.execute("UPDATE records SET review_flagged_at = ?, review_reason = 'due' WHERE id = ?",
                               ("2026-03-05T09:00:00Z", record_id))
    for bad in ("next week please banana", "2020-01-01", "yesterday", "x" * 200):
        with pytest.raises(InvalidInputError):
            actions.clear_review_flag(service, REVIEWER, record_id, "checked", bad)
    assert service.record(record_id).review_flagged_at is not None  # nothing changed
    cleared = actions.clear_review_flag(service, REVIEWER, record_id, "checked", "next week")
    assert cleared.review_flagged_at is None
    assert cleared.review_at.startswith("2026-03-09T00:00:00")  # Monday of the week after 5 March 2026
