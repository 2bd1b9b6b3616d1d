"""A small store whose memory content, entity names, evidence and queries are hostile HTML."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

XSS = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"


def assert_safe(markup: str) -> None:
    """No tag from data survived: hostile strings appear only escaped."""
    assert "<img" not in markup and "<script" not in markup
    assert "onerror=alert(1)>" not in markup


@dataclass
class Hostile:
    service: object
    session: object
    old_id: str
    new_id: str


@pytest.fixture
def hostile(service, clock):
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    session = service.start_session(agent_id="assistant", user_id="alice")
    session.record_turn("user", f"My manager {XSS} drinks {SCRIPT} tea.")
    first = session.call_tool("memory_write", {
        "type": "semantic", "content": f"My manager {XSS} drinks {SCRIPT} tea.", "attribute": "drink",
        "source_kind": "user_statement", "evidence": f"My manager {XSS} drinks {SCRIPT} tea", "about": XSS, "about_kind": "person",
    })
    assert first["ok"], first
    clock.advance(minutes=5)
    session.record_turn("user", f"Correction: my manager {XSS} drinks coffee now.")
    second = session.call_tool("memory_write", {
        "type": "semantic", "content": f"My manager {XSS} drinks coffee now.", "attribute": "drink",
        "source_kind": "user_statement", "evidence": f"my manager {XSS} drinks coffee now", "about": XSS, "about_kind": "person",
    })
    assert second["ok"] and first["record_id"] in second["superseded"], second
    return Hostile(service, session, first["record_id"], second["record_id"])


@pytest.fixture
def hit(hostile):
    response = hostile.service.search(agent_id="assistant", user_id="alice", query=f"coffee {XSS}")
    assert response.results
    return response


@pytest.fixture
def empty(hostile):
    response = hostile.service.search(agent_id="assistant", user_id="alice", query=f"banana bread {SCRIPT}")
    assert response.empty
    return response
