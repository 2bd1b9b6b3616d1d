"""The admin app's context view shows a real host decision: gaps, the admitted record, the exact
message the model read, and the gap searches folded into the decision (not listed twice)."""

from __future__ import annotations

from admin_ui.data.session_context import build_context_view
from memory_core.hostmem import HostMemory, decisions_for

from .helpers import small_world


def test_the_context_view_shows_what_the_host_issued(service):
    world = small_world(service)
    session = service.start_session(agent_id="assistant", user_id="alice")
    session.record_turn("user", "Hello.")
    session.record_turn("assistant", "Hi!")
    text = "Can you suggest something I could cook for dinner tonight?"
    session.record_turn("user", text)
    decision = HostMemory(service).decide(session, text)
    session.call_tool("memory_search", {"query": "what does alice eat"})  # the model's own search, later
    (row,) = decisions_for(service, session.id)

    view = build_context_view(service, session.id)
    assert view is not None and view.host_decisions_recorded
    deliveries = [d for t in view.turns for d in t.deliveries]
    (host,) = [d for d in deliveries if d.kind == "host_decision"]
    assert host.message == decision.message == row["message"]  # byte for byte what the model read
    assert host.gaps == row["gaps"] and host.received and host.decider == "offline-rules"
    assert [m.record_id for m in host.memories if m.admitted] == [world["alice_diet"]]
    searches = [d for d in deliveries if d.kind == "search"]
    assert [d.origin for d in searches] == ["model"]  # the gap searches sit inside the decision
    assert set(host.search_ids) == set(row["search_ids"]) and not set(host.search_ids) & set(searches[0].search_ids)
    assert view.memories_received >= 1
