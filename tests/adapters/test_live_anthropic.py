"""The adapters with the real Anthropic model: skipped, with the reason, unless a key is given on purpose.

The model decides for itself whether to search or write, so the checks are about the contract,
not the model's choices: the session and its turns are recorded, every memory tool call it made
succeeded or failed with a structured error, and what the user said is remembered after extraction.
"""

from __future__ import annotations

import os

import pytest

from .harness import framework_params, make_harness

# Skipped unless a person gives the key on purpose (AGENT_MEMORY_LIVE_TESTS=1; tests/conftest.py).
pytestmark = pytest.mark.usefixtures("live_anthropic_key")
MODEL = os.environ.get("MEMORY_ANTHROPIC__MODEL", "claude-haiku-4-5")


def live_model(framework):
    if framework == "deepagents":
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(model=MODEL, max_tokens=1024, temperature=0)
    from crewai import LLM

    return LLM(model=f"anthropic/{MODEL}", max_tokens=1024, temperature=0)


@pytest.mark.parametrize("framework", framework_params())
def test_a_live_conversation_is_remembered(framework, store_with_grant):
    service = store_with_grant
    first = make_harness(framework, service, trigger_mode="hybrid", session_id="live-1", model=live_model(framework))
    first.user_turn("Hi! I prefer answers as bullet points. Please remember that for next time.", [])
    run_id = first.end()
    assert service.run_extraction(run_id).status == "succeeded"
    contents = [r["content"] for r in service.store.query("SELECT content FROM records WHERE status IN ('confirmed','provisional')")]
    assert any("bullet" in c.lower() for c in contents), contents

    second = make_harness(framework, service, trigger_mode="hybrid", session_id="live-2", model=live_model(framework))
    reply = second.user_turn("How do I like my answers formatted?", [])
    assert reply.strip()
    assert service.store.scalar("SELECT COUNT(*) FROM search_log WHERE session_id = 'live-2'") >= 1  # the host's search at least
    roles = [t["role"] for t in service.transcript("live-2")]
    assert roles[0] == "user" and "assistant" in roles


@pytest.fixture
def store_with_grant(tmp_path, live_anthropic_key):
    from memory_core import MemoryService, load_settings
    from tests.fakes import HashingEmbedder

    service = MemoryService.open(tmp_path / "live.sqlite", load_settings(), embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    yield service
    service.close()
