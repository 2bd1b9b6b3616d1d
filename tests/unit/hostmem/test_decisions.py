"""Every user turn served with host-issued memory is logged: gaps, searches, candidates, verdicts."""

from __future__ import annotations

import json

import pytest

from memory_core.clock import format_ts, parse_ts
from memory_core.hostmem import HostMemory, decisions_for
from memory_core.hostmem.admission import Candidate, hard_check, issuable_scopes
from memory_core.hostmem.gaps import Gap

from .helpers import small_world


@pytest.fixture
def world(service):
    return small_world(service)


def turn(service, text, user="alice", project=None):
    session = service.start_session(agent_id="assistant", user_id=user, project_id=project)
    session.record_turn("user", "Hello.")
    session.record_turn("assistant", "Hi!")
    session.record_turn("user", text)
    return session, HostMemory(service).decide(session, text)


def test_an_ordinary_turn_is_logged_with_no_gap_and_no_message(service, world):
    session, decision = turn(service, "Thanks, that was helpful!")
    assert decision.result is None and decision.message is None and decision.admitted_ids == []
    (row,) = decisions_for(service, session.id)
    assert row["turn"] == 2 and row["gaps"] == [] and row["search_ids"] == [] and row["message"] is None
    assert row["decider"] == "offline-rules" and "no gap" in row["reason"]
    assert service.store.scalar("SELECT COUNT(*) FROM search_log WHERE session_id = ?", (session.id,)) == 0


def test_a_conditional_turn_searches_each_gap_through_the_log_and_issues_the_right_record(service, world):
    session, decision = turn(service, "Can you suggest something I could cook for dinner tonight?")
    assert decision.admitted_ids == [world["alice_diet"]]
    (row,) = decisions_for(service, session.id)
    assert row["gaps"] == decision.gaps and row["admitted_ids"] == [world["alice_diet"]]
    logged = {r["id"]: r for r in service.store.query("SELECT id, session_id, raw_query, origin FROM search_log")}
    assert row["search_ids"] and all(logged[s]["session_id"] == session.id for s in row["search_ids"])
    assert {logged[s]["origin"] for s in row["search_ids"]} == {"host"}  # the host searched, not the model
    assert [logged[s]["raw_query"] for s in row["search_ids"]] == row["gaps"]
    by_id = {c["record_id"]: c for c in row["candidates"]}
    assert set(by_id[world["alice_diet"]]) >= {"record_id", "version", "score", "admitted", "reason"}
    assert by_id[world["alice_diet"]]["admitted"] is True and by_id[world["alice_diet"]]["version"] == 1
    # another user's scope never reaches alice's conversation (the search's own scope filter), and a
    # project the agent may read is still not this personal conversation's memory (the hard check)
    assert world["bob_allergy"] not in by_id
    assert by_id[world["apollo_deploy"]]["admitted"] is False and "scope project:apollo" in by_id[world["apollo_deploy"]]["reason"]
    # the message is the exact tool-result text: the memory_search result shape, one line of JSON
    assert row["message"] == json.dumps(decision.result, ensure_ascii=False)
    parsed = json.loads(row["message"])
    assert parsed["ok"] and [r["id"] for r in parsed["results"]] == [world["alice_diet"]]
    assert parsed["search_id"] == row["id"] and parsed["explanation"]["searches"] == row["search_ids"]
    assert "vegan" in parsed["results"][0]["content"]


def test_what_the_conversation_already_says_is_not_issued(service, world):
    session, decision = turn(service, "I'm vegan and eat no meat, fish, eggs or dairy. Suggest a dinner I can cook.")
    assert decision.admitted_ids == []


def test_a_shared_project_session_gets_project_memory_only(service, world):
    _, lunch = turn(service, "Plan the team lunch for the Apollo launch.", project="apollo")
    assert world["alice_diet"] not in lunch.admitted_ids
    refused = [c for c in lunch.candidates if c.record_id == world["alice_diet"]]
    assert refused and "shared project session" in refused[0].reason
    _, deploy = turn(service, "We need to deploy a hotfix to production, what's the process?", project="apollo")
    assert deploy.admitted_ids == [world["apollo_deploy"]]


def test_superseded_and_forgotten_records_are_never_issued(service, world):
    newer = service.write_system_fact(scope="user:alice", content="Alice is vegetarian, no longer vegan: she eats dairy and eggs.",
                                      attribute="diet", actor="test")
    assert service.record(world["alice_diet"]).status == "superseded"
    _, decision = turn(service, "Can you suggest something I could cook for dinner tonight?")
    assert world["alice_diet"] not in decision.admitted_ids
    assert newer.record.id in decision.admitted_ids
    service.forget(newer.record.id, actor="test", reason="user asked")
    session, again = turn(service, "Can you suggest something I could cook for dinner tonight?")
    assert again.admitted_ids == []


def test_forgetting_an_issued_record_redacts_the_logged_message(service, world):
    session, decision = turn(service, "Can you suggest something I could cook for dinner tonight?")
    assert decision.message and "eats no meat" in decision.message
    plan = service.forget_preview(world["alice_diet"])
    assert decision.id in plan["host_memory_decisions"]
    service.forget(world["alice_diet"], actor="test", reason="user asked")
    (row,) = decisions_for(service, session.id)
    assert "eats no meat" not in row["message"] and "[forgotten]" in row["message"]
    assert json.loads(row["message"])["ok"] is True
    (forgotten,) = [c for c in row["candidates"] if c["record_id"] == world["alice_diet"]]
    assert forgotten["reason"] == "[forgotten]" and row["admitted_ids"] == [world["alice_diet"]]


def _cand(**over):
    base = dict(record_id="mem_x", version=1, content="x", type="semantic", scope="user:alice", status="confirmed",
                source_kind="system", gap=Gap("q"), search_id="srch_x", cosine=0.9, lexical=1.0, gate="")
    return Candidate(**{**base, **over})


@pytest.mark.parametrize("over, why", [
    ({"scope": "user:bob"}, "scope user:bob"),
    ({"scope": "project:zeus"}, "scope project:zeus"),
    ({"scope": "org:acme"}, "scope org:acme"),
    ({"status": "superseded"}, "status superseded"),
    ({"status": "expired"}, "status expired"),
    ({"status": "provisional"}, "status provisional"),
    ({"status": "deleted"}, "status deleted"),
    ({"type": "episodic"}, "type episodic"),
    ({"expires_at": "2026-03-01T00:00:00Z"}, "not valid now"),
    ({"valid_until": "2026-03-05T09:00:00Z"}, "not valid now"),
    ({"valid_from": "2026-04-01T00:00:00Z"}, "not valid now"),
])
def test_hard_checks_refuse_what_no_decider_may_issue(clock, over, why):
    scopes = issuable_scopes("assistant", "alice", None)
    assert why in hard_check(_cand(**over), scopes=scopes, now=clock.now())
    assert hard_check(_cand(), scopes=scopes, now=clock.now()) is None
    assert hard_check(_cand(scope="agent:assistant/alice"), scopes=scopes, now=clock.now()) is None
    assert hard_check(_cand(valid_until=format_ts(clock.now().replace(year=2027))), scopes=scopes, now=clock.now()) is None


def test_a_project_session_issues_only_its_project(clock):
    scopes = issuable_scopes("assistant", "alice", "apollo")
    assert scopes == ("project:apollo",)
    assert "shared project session" in hard_check(_cand(scope="user:alice"), scopes=scopes, now=clock.now())


def test_decisions_are_pruned_with_the_search_log(service, world, clock):
    from datetime import timedelta

    from memory_core.store.retention import prune_logs

    session, _ = turn(service, "Can you suggest something I could cook for dinner tonight?")
    keep = service.settings.housekeeping
    report = prune_logs(service.store, keep, clock.now() + timedelta(days=keep.search_log_max_age_days - 1))
    assert report.deleted["host_memory_decisions (age)"] == 0 and len(decisions_for(service, session.id)) == 1
    report = prune_logs(service.store, keep, clock.now() + timedelta(days=keep.search_log_max_age_days + 1))
    assert report.deleted["host_memory_decisions (age)"] == 1 and decisions_for(service, session.id) == []


def test_expired_and_out_of_date_records_are_never_issued(tmp_path):
    from memory_core.clock import FixedClock
    from memory_core.hostmem.bundle import build_world, load_bundle
    from memory_core.service import MemoryService
    from memory_core.settings import default_settings
    from tests.fakes import HashingEmbedder

    bundle = load_bundle()
    with MemoryService.open(tmp_path / "w.sqlite", default_settings(), clock=FixedClock(bundle.start),
                            embedder=HashingEmbedder()) as svc:
        ids = build_world(svc, bundle)
        assert svc.record(ids["alice_move_guess"]).status == "expired"
        assert parse_ts(svc.record(ids["alice_tokyo"]).valid_until) < svc.clock.now()
        for text in ("Is there a pharmacy near me?", "Find me a coworking space nearby where I live now.",
                     "I may be moving; help me find a flat near me.", "Where am I staying for work? Find a gym near me."):
            _, decision = turn(svc, text)
            assert not {ids["alice_move_guess"], ids["alice_tokyo"]} & set(decision.admitted_ids), text
            for cand in decision.candidates:
                if cand.record_id == ids["alice_tokyo"]:
                    assert "not valid now" in cand.reason
