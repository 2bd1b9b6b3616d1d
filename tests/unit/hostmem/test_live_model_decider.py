"""The model decider with the real Anthropic model: skipped, with the reason, unless a key is given on purpose.

The model's choices are its own, so the checks are about the contract: a decision row per turn
with the model as decider, ordinary turns get nothing, and nothing outside the hard checks is ever
issued.
"""

from __future__ import annotations


import pytest

from memory_core.hostmem import HostMemory, decisions_for
from memory_core.service import MemoryService
from memory_core.settings import load_settings
from tests.fakes import HashingEmbedder

from .helpers import small_world

# Skipped unless a person gives the key on purpose (AGENT_MEMORY_LIVE_TESTS=1; tests/conftest.py).
pytestmark = pytest.mark.usefixtures("live_anthropic_key")


def test_the_live_model_decides_within_the_contract(tmp_path, clock):
    with MemoryService.open(tmp_path / "live.sqlite", load_settings(), clock=clock, embedder=HashingEmbedder()) as svc:
        world = small_world(svc)
        host = HostMemory(svc)
        assert host.decider.startswith("anthropic:")
        for text in ("Hi there!", "Can you suggest something I could cook for dinner tonight?"):
            session = svc.start_session(agent_id="assistant", user_id="alice")
            session.record_turn("user", text)
            decision = host.decide(session, text)
            (row,) = decisions_for(svc, session.id)
            assert row["decider"] == host.decider
            assert set(decision.admitted_ids) <= {world["alice_diet"], world["alice_lang"]}
            if text == "Hi there!":
                assert decision.admitted_ids == []
