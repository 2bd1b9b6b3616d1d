"""The adapter contract under concurrency: two users' sessions interleaved in one process, through
each adapter with its real framework, from threads and from asyncio tasks. Nothing may cross:
what each model is shown (search results, host searches, the prompt), the records written, the
transcripts, the search and write log rows, and errors (every memory call succeeds)."""

from __future__ import annotations

import pytest

from .concurrency import PEOPLE, UsersModel, assert_nothing_crossed, grant_everyone
from .harness import framework_params, make_harness

pytestmark = pytest.mark.parametrize("framework", framework_params())


@pytest.mark.parametrize("how", ["threads", "asyncio"])
@pytest.mark.parametrize("mode", ["tool_only", "hybrid"])
def test_two_users_at_once_share_nothing(framework, service, how, mode):
    grant_everyone(service)
    model = UsersModel(parties=2)
    harness = make_harness(framework, service, trigger_mode=mode, script=model.script())
    alice, bob = PEOPLE["alice"], PEOPLE["bob"]
    replies = harness.together([(p.user_id, p.session_id, p.tell()) for p in (alice, bob)], how=how)
    assert replies == [alice.noted(), bob.noted()]
    replies = harness.together([(p.user_id, p.session_id, p.ask()) for p in (alice, bob)], how=how)
    assert replies == [alice.answer([alice.bank]), bob.answer([bob.bank])]
    assert_nothing_crossed(service, model, (alice, bob))
    if mode == "hybrid":
        host = service.store.query("SELECT user_id, session_id FROM search_log WHERE origin = 'host'")
        assert {(r["user_id"], r["session_id"]) for r in host} == {(p.user_id, p.session_id) for p in (alice, bob)}


def test_one_user_ending_does_not_touch_the_other(framework, service):
    grant_everyone(service)
    model = UsersModel(parties=2)
    harness = make_harness(framework, service, script=model.script())
    alice, bob = PEOPLE["alice"], PEOPLE["bob"]
    harness.together([(p.user_id, p.session_id, p.tell()) for p in (alice, bob)])
    harness.memory.end_session(alice.session_id)
    ended = {r["id"]: r["ended_at"] for r in service.store.query("SELECT id, ended_at FROM sessions")}
    assert ended[alice.session_id] and not ended[bob.session_id]
    harness.together([(p.user_id, p.session_id, p.ask()) for p in (alice, bob)])
    # alice's conversation went on in a continuation of her own session; bob's stayed in his
    assert [t["content"] for t in service.transcript(f"{alice.session_id}+2")] == [alice.ask(), alice.answer([alice.bank])]
    assert [t["content"] for t in service.transcript(bob.session_id)][2:] == [bob.ask(), bob.answer([bob.bank])]
