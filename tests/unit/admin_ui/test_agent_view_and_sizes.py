"""What an agent sees (the previewed prefix is what a session start records), the context window's
parts with their sizes, and a memory's status as it was when the model received it."""

from __future__ import annotations

import pytest

from admin_ui.data.agent_view import build_agent_view, empty_reason
from admin_ui.data.context_sizes import prefix_parts, with_shares
from admin_ui.data.session_context import FORGOTTEN, build_context_view, context_parts, status_at
from memory_core.adapters import MemoryRuntime
from memory_core.adapters.preview import preview_context
from memory_core.errors import InvalidInputError
from memory_core.text import count_tokens
from tests.unit.ambient.helpers import from_tool, said

STYLE = "The user wants short answers."


@pytest.mark.parametrize("mode", ["tool_only", "auto", "hybrid"])
def test_the_preview_is_what_a_session_opened_now_records(service, alice, mode):
    said(alice, "Please keep your answers short.", STYLE, "answer_style")
    preview = preview_context(service, "assistant", "alice", trigger_mode=mode, ambient=True)
    runtime = MemoryRuntime(service, framework="test", trigger_mode=mode, ambient=True)
    session = service.start_session(agent_id="assistant", user_id="alice", session_id=f"ses_{mode}")
    recorded = runtime.context(session)
    for field in ("policy", "profile_text", "profile_items", "profile_excluded", "profile_limits", "memory_tools"):
        assert preview[field] == recorded[field], field
    assert STYLE in preview["profile_text"]
    assert preview["adapter_prefix"] == runtime.prefix(session)
    assert service.session_context("ses_nothing") is None  # previewing recorded nothing


def test_the_preview_follows_the_switches_and_refuses_what_an_adapter_refuses(service, alice):
    said(alice, "Please keep your answers short.", STYLE, "answer_style")
    off = preview_context(service, "assistant", "alice", trigger_mode="auto", ambient=False)
    assert off["profile_text"] is None and off["profile_items"] == [] and not off["ambient_enabled"]
    assert "memory_search" not in [t["name"] for t in off["memory_tools"]]  # auto: the host searches
    with pytest.raises(InvalidInputError):
        preview_context(service, "assistant", "alice", trigger_mode="sometimes")
    with pytest.raises(InvalidInputError):
        preview_context(service, "assistant", "al ice; DROP", trigger_mode="tool_only")


def test_scopes_come_with_their_grant_and_live_record_counts(service, alice):
    said(alice, "Please keep your answers short.", STYLE, "answer_style")
    service.grant("assistant", "project:atlas", read=True, actor="ops", reason="Alice leads Atlas")
    view = build_agent_view(service, "assistant", "alice", trigger_mode="tool_only", ambient=True)
    by_scope = {s["scope"]: s for s in view.scopes}
    assert set(by_scope) == {"agent:assistant/alice", "project:atlas", "user:alice"}
    assert by_scope["user:alice"]["grant"].startswith("read + write, by test at ")
    assert by_scope["project:atlas"]["grant"].startswith("read, by ops at ") and not by_scope["project:atlas"]["writable"]
    assert by_scope["agent:assistant/alice"]["grant"] is None
    assert by_scope["user:alice"]["live records"] == 1 and view.live_records == 1
    assert empty_reason(view) is None
    assert [p.part for p in view.parts] == ["memory-use policy", "ambient profile", "tool definitions"]


def test_an_agent_without_a_grant_is_told_why_it_sees_nothing(service, alice):
    said(alice, "Please keep your answers short.", STYLE, "answer_style")
    view = build_agent_view(service, "scheduler", "alice", trigger_mode="tool_only", ambient=True)
    assert [s["scope"] for s in view.scopes] == ["agent:scheduler/alice"]
    why = empty_reason(view)
    assert why.startswith("Agent scheduler has no read grant for user alice")
    assert "agent:scheduler/alice, which holds 0 live record(s)" in why
    assert view.prefix["profile_items"] == []  # Alice's own preference is not in its scopes


def test_prefix_parts_count_the_host_text_without_the_policy_and_profile():
    prefix = {"policy": "Use memory well.", "profile_text": "About this user: short answers.", "ambient_enabled": True,
              "profile_items": [{}], "trigger_mode": "hybrid", "memory_tools": [{"name": "memory_get"}],
              "offered_tools": None,
              "system_text": "You are helpful.\n\nUse memory well.\n\nAbout this user: short answers."}
    parts = with_shares(prefix_parts(prefix))
    sizes = {p.part: p.tokens for p in parts}
    assert sizes["system text (the host's own)"] == count_tokens("You are helpful.")
    assert sizes["memory-use policy"] == count_tokens("Use memory well.")
    assert sizes["ambient profile"] == count_tokens("About this user: short answers.")
    assert abs(sum(p.share for p in parts) - 1.0) < 1e-9


def test_status_at_replays_a_records_events():
    events = [{"at": "2026-01-01T00:00:00Z", "kind": "record.created", "payload": {"status": "provisional"}},
              {"at": "2026-02-01T00:00:00Z", "kind": "record.promoted", "payload": {}},
              {"at": "2026-03-01T00:00:00Z", "kind": "record.forgotten", "payload": {}}]
    assert status_at(events, "2025-12-31T00:00:00Z") is None
    assert status_at(events, "2026-01-15T00:00:00Z") == "provisional"
    assert status_at(events, "2026-02-01T00:00:00Z") == "confirmed"
    assert status_at(events, "2026-03-02T00:00:00Z") == "deleted"


def test_a_memory_shows_its_status_then_and_a_forgotten_one_loses_text_and_size(service, alice, clock):
    said(alice, "Please keep your answers short.", STYLE, "answer_style")
    from_tool(alice, "prefers metric units", "The user prefers metric units.", "units")
    clock.advance(minutes=5)
    later = service.start_session(agent_id="assistant", user_id="alice", session_id="ses_later")
    later.record_turn("user", "How should you answer me, and which units?")
    result = later.call_tool("memory_search", {"query": "answer style short answers metric units"})
    assert result["ok"] and result["results"], result
    received = [item["id"] for item in result["results"]]
    clock.advance(minutes=5)
    gone = received[0]
    text = service.record(gone).content
    service.forget(gone, actor="test", reason="asked")
    view = build_context_view(service, "ses_later")
    memories = {m.record_id: m for d in view.deliveries() for m in d.memories}
    assert memories[gone].status_then == "confirmed" and memories[gone].status == "deleted"
    assert memories[gone].status_label == "confirmed then, forgotten since"
    assert memories[gone].content == FORGOTTEN and memories[gone].tokens is None
    parts = context_parts(view)
    row = next(p.row() for p in parts if p.part == f"memory {gone}")
    assert row["tokens (est.)"] is None and row["share"] == "-" and "size unknown" in row["detail"]
    assert all(text not in str(p.row()) for p in parts)
    kept = [m for rid, m in memories.items() if rid != gone]
    assert all(m.status_label == "confirmed" for m in kept)
    assert abs(sum(p.share for p in parts if p.share is not None) - 1.0) < 1e-9
