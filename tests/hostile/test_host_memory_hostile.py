"""Host-issued memory against a hostile tester: fuzzed turns, a model that overreaches, and two
stores that differ only in what the principal cannot read."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from memory_core.hostmem import HostMemory, decisions_for
from memory_core.service import MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder
from tests.unit.hostmem.helpers import QueuedLLM, small_world

TURNS = [
    "Can you suggest something I could cook for dinner tonight?", "Help me write a function that parses a CSV file.",
    "Hi!", "We need to deploy a hotfix to production, what's the process?", "What should I buy my sister?",
]


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(min_size=1, max_size=400).filter(lambda t: t.strip() and "\x00" not in t))
def test_any_turn_is_decided_and_logged_once(service, text):
    if not service.grants():
        small_world(service)
    session = service.start_session(agent_id="assistant", user_id="alice")
    try:
        session.record_turn("user", text)
    except Exception:
        return  # text the transcript itself refuses (e.g. lone surrogates) never reaches the host
    decision = HostMemory(service).decide(session, text)
    rows = decisions_for(service, session.id)
    assert len(rows) == 1 and rows[0]["id"] == decision.id
    if rows[0]["message"] is not None:
        assert json.loads(rows[0]["message"])["ok"] is True


def _decide_all(service):
    out = []
    for project in (None, "apollo"):
        for text in TURNS:
            session = service.start_session(agent_id="assistant", user_id="alice", project_id=project)
            session.record_turn("user", text)
            decision = HostMemory(service).decide(session, text)
            out.append(sorted(service.record(r).content for r in decision.admitted_ids))
    return out


def test_what_alice_cannot_read_changes_nothing(tmp_path, clock):
    plain = MemoryService.open(tmp_path / "a.sqlite", default_settings(), clock=clock, embedder=HashingEmbedder())
    crowded = MemoryService.open(tmp_path / "b.sqlite", default_settings(), clock=clock, embedder=HashingEmbedder())
    with plain, crowded:
        small_world(plain)
        small_world(crowded)
        # bob's and carol's facts, worded to match alice's gaps; the agent even holds grants on them
        crowded.grant("assistant", "user:carol", read=True, actor="test")
        for scope, content, attribute in (
            ("user:bob", "Bob is vegan and eats no meat or dairy at all.", "diet"),
            ("user:carol", "Carol writes her code in Haskell, the only programming language she uses.", "programming_language"),
            ("user:bob", "Bob's sister loves climbing.", "sister"),
        ):
            crowded.write_system_fact(scope=scope, content=content, attribute=attribute, actor="test")
        assert _decide_all(plain) == _decide_all(crowded)


def test_a_model_that_overreaches_is_bounded(tmp_path, clock):
    many = [f"gap number {i} " + "x" * 500 for i in range(20)]
    llm = QueuedLLM([{"draft": "d", "gaps": many}, {"verdicts": []}])
    with MemoryService.open(tmp_path / "m.sqlite", default_settings(), clock=clock, embedder=HashingEmbedder(), llm=llm) as svc:
        small_world(svc)
        session = svc.start_session(agent_id="assistant", user_id="alice")
        session.record_turn("user", "Anything?")
        decision = HostMemory(svc).decide(session, "Anything?")
        assert len(decision.gaps) == svc.settings.host_memory.max_gaps and all(len(g) <= 300 for g in decision.gaps)
        assert len(decision.search_ids) == len(decision.gaps)
