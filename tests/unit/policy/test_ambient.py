"""The eligibility rules alone (policy.ambient): pure functions over a record's fields."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from memory_core.policy.ambient import (
    AMBIENT, CANDIDATE, CATEGORIES, INELIGIBLE, REFUSED, REMOVED, ambient_status, category_of, ineligibility,
)

BASE = {"id": "mem_1", "type": "semantic", "source_kind": "user_statement", "status": "confirmed",
        "attribute": "answer_style", "valid_from": None, "valid_until": None, "review_at": None, "event_at": None,
        "scope_kind": "user", "scope_id": "alice", "created_at": "2026-03-01T00:00:00.000000Z"}


def rec(**changes):
    return {**BASE, **changes}


def test_a_confirmed_user_statement_about_answer_style_is_ambient():
    status = ambient_status(rec(), None, "alice")
    assert status.state == AMBIENT and status.allow and "trusted" in status.reason


@pytest.mark.parametrize("changes, words", [
    ({"source_kind": "agent_inference", "status": "provisional"}, "inference"),
    ({"source_kind": "agent_inference", "status": "confirmed"}, "inference"),
    ({"attribute": "trip"}, "not a response-shaping"),
    ({"attribute": "diagnosis"}, "not a response-shaping"),
    ({"attribute": "project_deadline"}, "not a response-shaping"),
    ({"attribute": None}, "not a response-shaping"),
    ({"valid_until": "2026-07-01T00:00:00Z"}, "conditional"),
    ({"review_at": "2026-07-01T00:00:00Z"}, "conditional"),
    ({"type": "episodic"}, "semantic"),
    ({"type": "procedural"}, "semantic"),
    ({"status": "superseded"}, "superseded"),
    ({"status": "deleted"}, "deleted"),
    ({"scope_kind": "project", "scope_id": "apollo"}, "shared"),
    ({"scope_kind": "org", "scope_id": "acme"}, "shared"),
    ({"scope_id": "bob"}, "not user alice"),
])
def test_ineligible_records_never_become_ambient_even_when_approved(changes, words):
    record = rec(**changes)
    approved = {"decision": "approved", "record_id": "mem_1", "actor": "ui:rita", "at": "2026-03-02"}
    for decision in (None, approved):
        status = ambient_status(record, decision, "alice")
        assert status.state == INELIGIBLE and not status.allow
        assert words in status.reason


def test_a_record_about_someone_else_is_not_the_users_preference():
    assert ambient_status(rec(), None, "alice", subject_is_owner=False).state == INELIGIBLE


def test_untrusted_sources_wait_for_a_reviewer_and_approval_is_per_version():
    record = rec(source_kind="tool_result")
    assert ambient_status(record, None, "alice").state == CANDIDATE
    approved = {"decision": "approved", "record_id": "mem_1", "actor": "ui:rita", "at": "t"}
    assert ambient_status(record, approved, "alice").state == AMBIENT
    # a new version of the lineage needs a new decision
    assert ambient_status(rec(source_kind="tool_result", id="mem_2"), approved, "alice").state == CANDIDATE
    provisional_statement = rec(status="provisional")
    assert ambient_status(provisional_statement, None, "alice").state == CANDIDATE


def test_refusal_and_removal():
    refused = {"decision": "refused", "record_id": "mem_1", "actor": "ui:rita", "at": "t"}
    assert ambient_status(rec(), refused, "alice").state == REFUSED
    assert ambient_status(rec(id="mem_2"), refused, "alice").state == AMBIENT  # refusal named another version
    removed = {"decision": "removed", "record_id": "mem_0", "actor": "ui:alice", "at": "t"}
    assert ambient_status(rec(id="mem_9"), removed, "alice").state == REMOVED  # the whole lineage
    restored = {"decision": "restored", "record_id": "mem_9", "actor": "ui:alice", "at": "t"}
    assert ambient_status(rec(id="mem_9"), restored, "alice").state == AMBIENT


def test_private_agent_scopes_belong_to_their_user():
    assert ineligibility(rec(scope_kind="agent", scope_id="assistant/alice"), "alice") is None
    assert ineligibility(rec(scope_kind="agent", scope_id="assistant/bob"), "alice") is not None
    assert ineligibility(rec(scope_kind="agent", scope_id="assistant"), "alice") is not None


@given(st.text(max_size=40))
def test_only_listed_attributes_have_a_category(attribute):
    listed = {a for attrs in CATEGORIES.values() for a in attrs}
    assert (category_of(attribute) is not None) == (attribute in listed)
