"""The scripted conversation through an installed adapter over the real packaged MiniLM embedder,
so the adapters are also covered end to end with the model the library ships (the contract suite
uses the tiny hashing embedder to keep torch out of the framework venvs)."""

from __future__ import annotations

import importlib.util

import pytest

from memory_core import FixedClock, MemoryService, load_settings

from .conversation import play
from .harness import INSTALLED, make_harness

torch_missing = importlib.util.find_spec("torch") is None
pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(torch_missing, reason="the real embedder needs torch (main venv only)"),
]


@pytest.mark.parametrize("framework", [f for f in ("deepagents", "crewai") if INSTALLED[f]] or
                         [pytest.param("none", marks=pytest.mark.skip(reason="no framework installed"))])
def test_conversation_over_the_real_embedder(framework, tmp_path):
    from memory_core.service import shared_embedder

    settings = load_settings()
    service = MemoryService.open(tmp_path / "memory.sqlite", settings, clock=FixedClock("2026-03-05T10:00:00Z"),
                                 embedder=shared_embedder(settings.embedder))
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    harness = make_harness(framework, service, trigger_mode="hybrid")
    run_id = play(harness)
    assert service.run_extraction(run_id).status == "succeeded"
    rows = {r["content"]: (r["status"], r["source_kind"])
            for r in service.store.query("SELECT content, status, source_kind FROM records WHERE type = 'semantic'")}
    assert rows["The user prefers concise answers."] == ("superseded", "user_statement")
    assert rows["The user prefers detailed answers with examples."] == ("confirmed", "user_statement")
    assert rows["Order 4411 was shipped by courier Rapidex."] == ("confirmed", "tool_result")
    assert not any("Miso" in content for content in rows)
    assert any("timezone" in content.lower() for content in rows)
    # the host searches of hybrid mode ran the real pipeline and were logged with this session
    assert service.store.scalar("SELECT COUNT(*) FROM search_log WHERE session_id = 'ses-1'") >= 5
    service.close()
