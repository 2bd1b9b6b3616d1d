"""The context view and the ambient profile in a real browser against a real `streamlit run`.

A real Deep Agents agent (scripted model, hybrid mode, ambient profile on) holds a conversation
over a copy of the demo store with the packaged model; the journey then opens the session's
context view, follows a link to the search explanation, and Alice removes an item from her profile.
"""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.e2e.app_utils import check, click, eventually, fill, goto, key, nav, select, sign_in_as, table_text
from tests.e2e.conftest import start_server, stop_server

pytestmark = pytest.mark.e2e

UNITS = "The user wants metric units."
SESSION = "ses_e2e_context"


def converse(store) -> None:
    """Alice states a preference, then a new session of a Deep Agents agent starts with the profile on."""
    pytest.importorskip("deepagents")
    from deepagents import create_deep_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from memory_core import FixedClock, MemoryService, load_settings
    from memory_core.adapters.deepagents import DeepAgentsMemory
    from memory_core.adapters.script import Call, Say, Script
    from memory_core.adapters.scripted_langchain import ScriptedChatModel
    from memory_core.store.db import Store

    probe = Store.open(store, "2026-01-01T00:00:00Z")
    now = probe.get_meta("demo_now")
    probe.close()
    clock = FixedClock(now)
    with MemoryService.open(store, load_settings(), clock=clock) as service:
        earlier = service.start_session(agent_id="assistant", user_id="alice", session_id="ses_e2e_prefs")
        earlier.record_turn("user", "Use metric units with me.")
        assert earlier.call_tool("memory_write", {"type": "semantic", "content": UNITS, "attribute": "units",
                                                  "source_kind": "user_statement", "evidence": "Use metric units with me."})["ok"]
        earlier.end()
        clock.advance(minutes=5)
        script = Script([Call(("memory_search", {"query": "units the user prefers"})), Say("Metric, of course.")])
        memory = DeepAgentsMemory(service, trigger_mode="hybrid", ambient=True)
        agent = create_deep_agent(model=ScriptedChatModel(script=script), system_prompt="You are a helpful assistant.",
                                  middleware=[memory.middleware()], checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": SESSION, "agent_id": "assistant", "user_id": "alice"}}
        agent.invoke({"messages": [{"role": "user", "content": "Which units do I like for distances?"}]}, config)
        assert UNITS in script.requests[0].system


@pytest.fixture(scope="module")
def context_server(demo_template, tmp_path_factory):
    work = tmp_path_factory.mktemp("context")
    template = work / "template.sqlite"
    shutil.copy(demo_template, template)
    converse(template)
    (work / "server").mkdir()
    proc, base, store, log = start_server(template, work / "server", demo=True)
    yield base, store
    stop_server(proc, log)


def test_the_context_view_shows_the_profile_and_links_to_the_search(context_server, page):
    base, store = context_server
    goto(page, base)
    nav(page, "Session context")
    select(page, "context_session_id", SESSION)
    profile = key(page, "context_profile")
    expect(profile.locator('[data-testid="stCode"]').filter(has_text=UNITS)).to_be_visible()
    assert eventually(page, lambda: UNITS in table_text(page, "context_profile_items"))
    expect(key(page, "context_policy").locator('[data-testid="stCode"]').filter(has_text="Long-term memory")).to_be_visible()
    expect(key(page, "context_system").locator('[data-testid="stCode"]').filter(has_text="You are a helpful assistant.")).to_be_visible()
    expect(page.get_by_text("the model's own memory_search", exact=False).first).to_be_visible()
    with sqlite3.connect(store) as conn:
        model_search = conn.execute("SELECT id FROM search_log WHERE session_id = ? AND origin = 'model'", (SESSION,)).fetchone()[0]
    page.get_by_role("link", name=f"Explain search {model_search}").click()
    expect(page.get_by_role("heading", name="Search explorer")).to_be_visible()
    assert eventually(page, lambda: model_search in page.url)


def test_alice_removes_an_item_from_her_profile(context_server, page):
    base, store = context_server
    sign_in_as(page, base, "alice", "alice-demo-2026")
    nav(page, "Ambient profile")
    assert eventually(page, lambda: UNITS in table_text(page, "profile_table"))
    with sqlite3.connect(store) as conn:
        record_id = conn.execute("SELECT id FROM records WHERE content = ? AND status = 'confirmed'", (UNITS,)).fetchone()[0]
    select(page, "profile_remove_id", record_id)
    fill(page, "profile_remove_reason", "I switched to imperial", submit=False)
    check(page, "profile_remove_confirm")
    click(page, "profile_remove_submit")
    expect(page.get_by_text(f"Removed {record_id} from your profile", exact=False)).to_be_visible()
    with sqlite3.connect(store) as conn:
        row = conn.execute("SELECT decision, actor FROM ambient_decisions WHERE record_id = ? ORDER BY seq DESC", (record_id,)).fetchone()
        recorded = conn.execute("SELECT profile_text FROM session_context WHERE session_id = ?", (SESSION,)).fetchone()[0]
    assert tuple(row) == ("removed", "ui:alice")
    assert UNITS in recorded  # the started session keeps the profile it recorded
