"""A refused write is a value: ``Ingestor.attempt`` returns a ``WriteRefusal`` naming the stage, the
refusal is logged once, and nothing rides on the exception."""

from __future__ import annotations

import json

import pytest

from memory_core.errors import InvalidInputError, PermissionDeniedError
from memory_core.ingest.write_types import WriteRefusal, WriteRequest
from memory_core.policy.scopes import Scope


def _request(**overrides) -> WriteRequest:
    fields = dict(type="semantic", content="The launch moved to May.", scope=Scope("project", "apollo"), source_kind="agent_inference",
                  agent_id="assistant", user_id="alice", actor="agent:assistant", attribute="launch")
    return WriteRequest(**{**fields, **overrides})


def _counts(service) -> tuple[int, int, int]:
    store = service.store
    return (store.scalar("SELECT COUNT(*) FROM records"), store.scalar("SELECT COUNT(*) FROM entities"),
            store.scalar("SELECT COUNT(*) FROM write_log WHERE outcome = 'refused'"))


def test_a_refusal_before_the_transaction_is_returned_with_its_stage(service):
    result = service.ingestor.attempt(_request(), service.access("assistant", "alice"))  # no grant on project:apollo

    assert isinstance(result, WriteRefusal) and result.logged
    assert result.stage == "permission_check" and isinstance(result.error, PermissionDeniedError)
    assert not hasattr(result.error, "failed_stage") and not hasattr(result.error, "write_logged")
    assert _counts(service) == (0, 0, 1)


def test_a_refusal_inside_the_transaction_rolls_it_back_and_logs_once(service):
    service.grant("assistant", "project:apollo", read=True, write=True, actor="test")
    access = service.access("assistant", "alice")
    # a semantic record outside the user's own scope needs an 'about' entity: refused by a stage
    # inside the write's transaction (entity resolution), which is rolled back
    request = _request(mentions=["Apollo launch team"])

    with pytest.raises(InvalidInputError):
        service.ingestor.write(request, access)

    assert _counts(service) == (0, 0, 1)
    row = service.store.query_one("SELECT validation, stages FROM write_log WHERE outcome = 'refused'")
    assert json.loads(row["validation"])["refused"]["stage"] == "entity_link_resolution"
    assert "entity_link_resolution" in json.loads(row["stages"])
