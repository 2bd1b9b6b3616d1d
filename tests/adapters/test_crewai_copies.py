"""Every way CrewAI runs a crew keeps memory with the kickoff's own identity, or refuses it clearly.

``crew.copy()`` (behind ``kickoff_for_each`` and ``kickoff_for_each_async``) keeps a crew's kickoff
callbacks and its agents' tool objects, and carries the text of the crew's last kickoff into the
copy; CrewAI's hooks are process-wide and its tool cache is keyed by tool name and arguments
only. Each test drives the real library with one scripted model serving every user.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from memory_core.adapters.script import Call, Say, Script
from memory_core.errors import IdentityError, InvalidInputError

from .concurrency import PEOPLE, UsersModel, assert_nothing_crossed, grant_everyone
from .harness import INSTALLED, make_harness, run_in_threads

pytestmark = pytest.mark.skipif(not INSTALLED["crewai"], reason="crewai is not installed here; `make test` runs it in .venv-crewai")

ALICE, BOB, CAROL = PEOPLE["alice"], PEOPLE["bob"], PEOPLE["carol"]
WAIT_S = 60  # safety net for event waits; nothing is timed


def inputs(person, text):
    return {"user_id": person.user_id, "session_id": person.session_id, "user_message": text}


@pytest.fixture
def granted(service):
    grant_everyone(service)
    return service


def harness_with(service, model, **kwargs):
    return make_harness("crewai", service, script=model.script(), **kwargs)


def test_a_copied_crew_has_working_memory(granted):
    model = UsersModel(parties=1)
    harness = harness_with(granted, model)
    assert harness.crew.copy().kickoff(inputs=inputs(ALICE, ALICE.tell())).raw == ALICE.noted()
    assert harness.crew.copy().kickoff(inputs=inputs(ALICE, ALICE.ask())).raw == ALICE.answer([ALICE.bank])
    assert_nothing_crossed(granted, model, [ALICE])


def test_kickoff_for_each_keeps_each_input_with_its_own_user(granted):
    model = UsersModel(parties=1)
    harness = harness_with(granted, model)
    assert [o.raw for o in harness.crew.kickoff_for_each([inputs(p, p.tell()) for p in (ALICE, BOB)])] == [ALICE.noted(), BOB.noted()]
    answers = [o.raw for o in harness.crew.kickoff_for_each([inputs(p, p.ask()) for p in (ALICE, BOB)])]
    assert answers == [ALICE.answer([ALICE.bank]), BOB.answer([BOB.bank])]
    assert_nothing_crossed(granted, model, [ALICE, BOB])


def test_copies_of_a_crew_that_has_run_start_from_its_templates_not_its_last_inputs(granted):
    model = UsersModel(parties=1)
    harness = harness_with(granted, model)
    harness.agent.backstory = "You are helping {user_id}.\n\n" + harness.agent.backstory  # a templated agent too
    harness.crew.kickoff(inputs=inputs(ALICE, ALICE.tell()))  # the crew now holds alice's filled-in text
    assert [o.raw for o in harness.crew.kickoff_for_each([inputs(p, p.tell()) for p in (BOB, CAROL)])] == [BOB.noted(), CAROL.noted()]
    harness.crew.kickoff(inputs=inputs(ALICE, ALICE.ask()))
    copy = harness.crew.copy()
    assert copy.copy().kickoff(inputs=inputs(BOB, BOB.ask())).raw == BOB.answer([BOB.bank])  # a copy of a copy
    assert copy.kickoff(inputs=inputs(CAROL, CAROL.ask())).raw == CAROL.answer([CAROL.bank])
    assert_nothing_crossed(granted, model, [ALICE, BOB, CAROL])
    for person, request in model.seen:
        assert f"You are helping {person.user_id}." in request.system


def test_kickoff_for_each_async_runs_each_copy_for_its_own_user(granted):
    model = UsersModel(parties=2)
    harness = harness_with(granted, model, trigger_mode="hybrid")
    told = asyncio.run(harness.crew.kickoff_for_each_async([inputs(p, p.tell()) for p in (ALICE, BOB)]))
    assert [o.raw for o in told] == [ALICE.noted(), BOB.noted()]
    asked = asyncio.run(harness.crew.kickoff_for_each_async([inputs(p, p.ask()) for p in (ALICE, BOB)]))
    assert [o.raw for o in asked] == [ALICE.answer([ALICE.bank]), BOB.answer([BOB.bank])]
    assert_nothing_crossed(granted, model, [ALICE, BOB])


def test_native_async_kickoffs_keep_their_own_users(granted):
    model = UsersModel(parties=2)
    harness = harness_with(granted, model, trigger_mode="hybrid")
    told = asyncio.run(harness.crew.akickoff_for_each([inputs(p, p.tell()) for p in (ALICE, BOB)]))
    assert [o.raw for o in told] == [ALICE.noted(), BOB.noted()]

    async def ask_both():
        return await asyncio.gather(harness.crew.akickoff(inputs=inputs(ALICE, ALICE.ask())),
                                    harness.crew.copy().akickoff(inputs=inputs(BOB, BOB.ask())))

    assert [o.raw for o in asyncio.run(ask_both())] == [ALICE.answer([ALICE.bank]), BOB.answer([BOB.bank])]
    assert_nothing_crossed(granted, model, [ALICE, BOB])


def test_streamed_kickoffs_keep_their_own_users(granted):
    """``Crew(stream=True)``: CrewAI runs the kickoff in a thread of its own behind the stream."""
    model = UsersModel(parties=1)
    harness = harness_with(granted, model)
    harness.crew.stream = True
    for say in ("tell", "ask"):
        streamed = [harness.crew.kickoff(inputs=inputs(ALICE, getattr(ALICE, say)())),
                    *harness.crew.kickoff_for_each([inputs(BOB, getattr(BOB, say)())])]
        for output in streamed:
            for _chunk in output:
                pass
        expected = [p.noted() if say == "tell" else p.answer([p.bank]) for p in (ALICE, BOB)]
        assert [output.result.raw for output in streamed] == expected
    assert_nothing_crossed(granted, model, [ALICE, BOB])


def test_several_crews_and_two_adapters_in_one_process(granted):
    from crewai import Agent, Crew, Task

    from memory_core.adapters.scripted_crewai import ScriptedLLM

    granted.grant("concierge", "user:carol", read=True, write=True, actor="test")
    model = UsersModel(parties=3)
    first = harness_with(granted, model)
    # a second crew on the same adapter, and a crew on another adapter serving another agent
    agent = Agent(role="Assistant", goal="Help the user", backstory="You are kind.", llm=ScriptedLLM(model="scripted", script=model.script()))
    first.memory.equip(agent, agent_id="assistant")
    second = first.memory.attach(Crew(agents=[agent], tasks=[Task(description="{user_message}", expected_output="A reply.",
                                                                  agent=agent)]))
    other = harness_with(granted, model, agent_id="concierge")
    crews = ((first.crew, ALICE), (second, BOB), (other.crew, CAROL))
    for say in ("tell", "ask"):
        run_in_threads([lambda c=crew, p=person, s=say: c.kickoff(inputs=inputs(p, getattr(p, s)())) for crew, person in crews])
    assert_nothing_crossed(granted, model, [ALICE, BOB, CAROL], agents={"carol": "concierge"})


def test_one_crew_instance_runs_one_kickoff_at_a_time(granted):
    entered, release = threading.Event(), threading.Event()

    def held_reply(request):
        entered.set()
        assert release.wait(WAIT_S)
        return Say("Hello Alice.")

    harness = make_harness("crewai", granted, script=Script([held_reply]))
    done = []
    first = threading.Thread(target=lambda: done.append(harness.crew.kickoff(inputs=inputs(ALICE, "Hi, I'm Alice."))))
    first.start()
    try:
        assert entered.wait(WAIT_S)
        with pytest.raises(IdentityError, match=r"already running a kickoff.*crew\.copy\(\)"):
            harness.crew.kickoff(inputs=inputs(BOB, "Hi, I'm Bob."))
    finally:
        release.set()
        first.join()
    assert [o.raw for o in done] == ["Hello Alice."]
    assert [t["content"] for t in granted.transcript(ALICE.session_id)] == ["Hi, I'm Alice.", "Hello Alice."]
    assert granted.store.scalar("SELECT COUNT(*) FROM sessions WHERE user_id = 'bob'") == 0
    # once the first kickoff is over the crew takes the next one
    harness.script.extend([Say("Hello Bob.")])
    assert harness.crew.kickoff(inputs=inputs(BOB, "Hi, I'm Bob.")).raw == "Hello Bob."


def test_a_kickoff_that_fails_frees_its_crew(granted):
    harness = make_harness("crewai", granted)
    with pytest.raises(Exception):
        harness.crew.kickoff(inputs=inputs(ALICE, "Hi."))  # the scripted model has no reply: the kickoff fails
    harness.script.extend([Say("Hello.")])
    assert harness.crew.kickoff(inputs=inputs(ALICE, "Hi again.")).raw == "Hello."
    assert harness.memory._kickoffs == {}


def test_memory_tool_results_are_never_served_from_crewais_tool_cache(granted):
    model = UsersModel(parties=1)
    harness = harness_with(granted, model)
    harness.crew.cache = True  # CrewAI's opt-in tool cache, keyed by tool name and arguments
    for person in (ALICE, BOB):
        harness.crew.kickoff(inputs=inputs(person, person.tell()))
    for person in (ALICE, BOB):  # the same search arguments for both users
        assert harness.crew.kickoff(inputs=inputs(person, person.ask())).raw == person.answer([person.bank])
    assert_nothing_crossed(granted, model, [ALICE, BOB])


def test_identical_memory_writes_from_two_users_are_both_written_under_crewais_tool_cache(granted):
    harness = make_harness("crewai", granted)
    harness.crew.cache = True
    same = ("memory_write", {"type": "semantic", "content": "The user likes green tea.", "attribute": "drink",
                             "source_kind": "user_statement", "evidence": "I like green tea"})
    for person in (ALICE, BOB):  # identical arguments: a cached result would report bob's write without writing it
        harness.script.extend([Call(same), Say("Noted.")])
        harness.crew.kickoff(inputs=inputs(person, "I like green tea."))
    rows = granted.store.query("SELECT scope_id FROM records WHERE content = 'The user likes green tea.'")
    assert sorted(r["scope_id"] for r in rows) == ["alice", "bob"]


def test_attaching_again_changes_nothing_and_a_second_memory_is_refused(granted):
    from memory_core.adapters.crewai import CrewAIMemory

    events = []
    harness = make_harness("crewai", granted, listeners=[events.append])
    harness.memory.attach(harness.crew)
    harness.memory.attach(harness.crew.copy())
    with pytest.raises(InvalidInputError, match="another CrewAIMemory"):
        CrewAIMemory(granted).attach(harness.crew)
    harness.user_turn("Hi.", [Say("Hello.")])
    assert [(e.type, e.role) for e in events] == [("session_started", None), ("turn_completed", "user"),
                                                  ("turn_completed", "assistant")]


def test_an_equipped_agent_outside_an_attached_kickoff_is_refused(granted):
    from crewai import Crew, Task

    harness = make_harness("crewai", granted)
    harness.script.extend([Call(("memory_search", {"query": "anything"})), Say("Hello.")])
    loose = Crew(agents=[harness.agent], tasks=[Task(description="{user_message}", expected_output="A reply.", agent=harness.agent)])
    with pytest.raises(IdentityError, match="CrewAIMemory.attach"):
        loose.kickoff(inputs=inputs(ALICE, "Hi."))  # equipped, never attached: memory would silently do nothing
    with pytest.raises(IdentityError, match="an agent run on its own"):
        harness.agent.kickoff("Hi.")  # CrewAI's standalone agent run: no crew, no kickoff inputs
    assert granted.store.scalar("SELECT COUNT(*) FROM sessions") == 0
    assert len(harness.script.requests) == 0, "the model was never called"


def test_a_memory_tool_called_outside_a_kickoff_answers_with_a_readable_error(granted):
    harness = make_harness("crewai", granted)
    tool = next(t for t in harness.agent.tools if t.name == "memory_search")
    text = tool.run(query="anything")
    assert text.startswith("Error (identity_missing): a memory tool was called outside a running kickoff")


def test_clearing_crewais_hooks_does_not_silence_memory(granted):
    from crewai.hooks import clear_all_global_hooks, clear_all_hooks

    harness = make_harness("crewai", granted)
    clear_all_global_hooks()  # CrewAI's model and tool hooks, e.g. in a host's own test set-up
    harness.user_turn("Hi.", [Say("Hello.")])
    harness.script.extend([Say("Yes.")])
    copy = harness.crew.copy()
    clear_all_global_hooks()
    assert copy.kickoff(inputs={**harness.inputs, "user_message": "Still there?"}).raw == "Yes."
    clear_all_hooks()  # every interception point, the start of a kickoff included
    copy = harness.crew.copy()
    # memory did not see this copy start, so it cannot know which crew object runs: refused, not guessed
    with pytest.raises(IdentityError, match="kick it off again"):
        copy.kickoff(inputs={**harness.inputs, "user_message": "And now?"})
    harness.script.extend([Say("Still here.")])
    assert copy.kickoff(inputs={**harness.inputs, "user_message": "And now?"}).raw == "Still here."
    assert [t["content"] for t in granted.transcript("ses-1")] == ["Hi.", "Hello.", "Still there?", "Yes.", "And now?",
                                                                   "Still here."]
