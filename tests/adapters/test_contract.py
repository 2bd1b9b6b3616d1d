"""The adapter contract (design section 12), run against every adapter with a real framework.

Each test drives a real Deep Agents graph or CrewAI crew with its framework's scripted model, over
a real SQLite store (the tiny hashing embedder keeps torch out of the framework venvs; the main
suite's test_real_embedder runs an adapter over the packaged MiniLM).
"""

from __future__ import annotations

import pytest

from memory_core.adapters import memory_policy
from memory_core.adapters.base import MEMORY_TOOL_NAMES
from memory_core.adapters.script import Call, Say
from memory_core.errors import IdentityError, PolicyError, SessionClosedError, SessionOwnerError

from .harness import ORDER_TEXT, framework_params, make_harness

pytestmark = pytest.mark.parametrize("framework", framework_params())

PREFERENCE = "I prefer concise answers with code first."
WRITE_PREFERENCE = ("memory_write", {
    "type": "semantic", "content": "The user prefers concise answers with code first.", "attribute": "answer_style",
    "source_kind": "user_statement", "evidence": "I prefer concise answers with code first",
})
EXPECTED_TOOLS = {
    "tool_only": sorted(MEMORY_TOOL_NAMES),
    "hybrid": sorted(MEMORY_TOOL_NAMES),
    "auto": sorted(n for n in MEMORY_TOOL_NAMES if n != "memory_search"),
}


@pytest.fixture
def store(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    return service


def memory_tools_seen(request):
    return sorted(name for name in request.tool_names if name.startswith("memory_"))


def search_count(service, session_id):
    return service.store.scalar("SELECT COUNT(*) FROM search_log WHERE session_id = ?", (session_id,))


@pytest.mark.parametrize("mode", ["tool_only", "auto", "hybrid"])
def test_tools_offered_per_mode_with_the_core_schemas(framework, store, mode):
    harness = make_harness(framework, store, trigger_mode=mode)
    expected = [s for s in store.tool_schemas() if s["name"] in EXPECTED_TOOLS[mode]]
    assert sorted(harness.tool_definitions(), key=lambda d: d["name"]) == sorted(expected, key=lambda d: d["name"])
    harness.user_turn("Hello there.", [Say("Hi!")])
    (request,) = harness.script.requests
    assert memory_tools_seen(request) == EXPECTED_TOOLS[mode]
    assert "lookup_order" in request.tool_names  # the host's own tools stay


@pytest.mark.parametrize("mode", ["tool_only", "auto", "hybrid"])
def test_the_static_policy_is_in_the_system_prompt(framework, store, mode):
    harness = make_harness(framework, store, trigger_mode=mode)
    harness.user_turn("Hello there.", [Say("Hi!")])
    assert memory_policy(mode) in harness.script.requests[0].system
    assert harness.memory.policy() == memory_policy(mode)


def test_events_fire_in_order_and_turns_reach_the_transcript(framework, store):
    events = []
    harness = make_harness(framework, store, listeners=[events.append])
    harness.user_turn(PREFERENCE, [Call(WRITE_PREFERENCE), Say("Noted: concise, code first.")])
    harness.user_turn("Where is order 4411?", [Call(("lookup_order", {"order_id": "4411"})), Say("It shipped yesterday.")])
    run_id = harness.end()
    assert [(e.type, e.role) for e in events] == [
        ("session_started", None),
        ("turn_completed", "user"), ("turn_completed", "assistant"),
        ("turn_completed", "user"), ("turn_completed", "tool"), ("turn_completed", "assistant"),
        ("session_ended", None),
    ]
    assert all(e.framework == framework for e in events)
    transcript = store.transcript("ses-1")
    assert [t["role"] for t in transcript] == ["user", "assistant", "user", "tool", "assistant"]
    assert transcript[0]["content"] == PREFERENCE and ORDER_TEXT in transcript[3]["content"]
    assert not any("record_id" in t["content"] for t in transcript), "memory tool results stay out of the transcript"
    row = store.store.query_one("SELECT framework, trigger_mode, ended_at FROM sessions WHERE id = 'ses-1'")
    assert (row["framework"], row["trigger_mode"]) == (framework, "tool_only") and row["ended_at"]
    detail = store.run_extraction(run_id)
    assert detail is not None and detail.status == "succeeded"
    summaries = store.store.query("SELECT content FROM records WHERE type = 'episodic' AND source_ref = 'ses-1'")
    assert summaries, "extraction wrote the session summary"


def test_an_evidenced_write_is_confirmed_and_searchable(framework, store):
    harness = make_harness(framework, store)
    harness.user_turn(PREFERENCE, [Call(WRITE_PREFERENCE), Say("Noted.")])
    harness.user_turn("How should you format answers?",
                      [Call(("memory_search", {"query": "how the user wants answers formatted"})), Say("Concise, code first.")])
    write_result = harness.script.requests[1].tool_results("memory_write")[0]
    assert write_result["ok"] and write_result["status"] == "confirmed" and write_result["source_kind"] == "user_statement"
    search_result = harness.script.requests[-1].tool_results("memory_search")[0]
    assert [r["id"] for r in search_result["results"]] == [write_result["record_id"]]


def test_a_host_tool_result_can_be_cited_as_evidence(framework, store):
    harness = make_harness(framework, store)
    harness.user_turn("Where is order 4411?", [
        Call(("lookup_order", {"order_id": "4411"})),
        Call(("memory_write", {"type": "episodic", "content": "Order 4411 shipped on 2026-03-04 by courier Rapidex.",
                               "source_kind": "tool_result", "evidence": ORDER_TEXT, "event_at": "2026-03-04"})),
        Say("It shipped on 4 March."),
    ])
    result = harness.script.requests[2].tool_results("memory_write")[0]
    assert result["ok"] and result["source_kind"] == "tool_result" and not result["downgraded"]


def test_errors_reach_the_model_readably_and_write_nothing(framework, store):
    harness = make_harness(framework, store)
    before = store.store.scalar("SELECT COUNT(*) FROM records")
    harness.user_turn("Remember this.", [
        Call(("memory_write", {"type": "semantic", "attribute": "x"})),                       # no content
        Call(("memory_get", {"record_id": "mem_doesnotexist"})),
        Say("Sorry, that did not work."),
    ])
    bad_write = harness.script.requests[1].messages[-1]
    assert bad_write["role"] == "tool" and bad_write["content"].startswith("Error (invalid_input): invalid arguments")
    assert harness.script.requests[1].tool_results("memory_write")[0]["error"]["code"] == "invalid_input"
    assert harness.script.requests[2].tool_results("memory_get")[0]["error"]["code"] == "not_found"
    assert store.store.scalar("SELECT COUNT(*) FROM records") == before


def test_scopes_and_grants_hold_through_the_adapter(framework, store):
    store.grant("assistant", "user:bob", read=True, write=True, actor="test")
    bob = store.start_session(agent_id="assistant", user_id="bob")
    bob_record = bob.call_tool("memory_write", {"type": "semantic", "content": "Bob's bank is Contoso.", "attribute": "bank"})["record_id"]
    store.grant("other-agent", "user:alice", read=True, write=False, actor="test")
    harness = make_harness(framework, store)
    harness.user_turn("What bank do I use? Contoso?", [
        Call(("memory_search", {"query": "Contoso bank"})),
        Call(("memory_get", {"record_id": bob_record})),
        Call(("memory_write", {"type": "semantic", "content": "Note for bob.", "attribute": "n", "target": "bob"})),
        Say("I don't know your bank."),
    ])
    requests = harness.script.requests
    assert bob_record not in str(requests[1].tool_results("memory_search")[0]["results"])
    assert requests[2].tool_results("memory_get")[0]["error"]["code"] == "not_found"
    assert requests[3].tool_results("memory_write")[0]["error"]["code"] == "invalid_input"  # unknown write target
    # an agent with read-only access cannot write through its adapter either
    reader = make_harness(framework, store, agent_id="other-agent", session_id="ses-2")
    reader.user_turn(PREFERENCE, [Call(WRITE_PREFERENCE), Say("ok")])
    assert reader.script.requests[1].tool_results("memory_write")[0]["error"]["code"] == "permission_denied"


@pytest.mark.parametrize("missing", ["user_id", "agent_id", "session_id"])
def test_missing_identity_is_refused_not_guessed(framework, store, missing):
    harness = make_harness(framework, store)
    key = {"deepagents": {"session_id": None}, "crewai": {"agent_id": None}}[framework].get(missing, missing)
    if key is None:
        pytest.skip(f"{framework} cannot run without {missing} (LangGraph's checkpointer needs thread_id; "
                    "CrewAI's agent id is set by equip)")
    with pytest.raises(IdentityError, match=missing if missing != "session_id" else "session_id") as info:
        harness.user_turn(PREFERENCE, [Call(WRITE_PREFERENCE), Say("ok")], drop=(key,))
    assert "never guesses" in info.value.message
    assert store.store.scalar("SELECT COUNT(*) FROM sessions") == 0
    assert store.store.scalar("SELECT COUNT(*) FROM records") == 0


def test_a_session_cannot_change_principal(framework, store):
    store.grant("assistant", "user:bob", read=True, write=True, actor="test")
    harness = make_harness(framework, store)
    harness.user_turn("Hi.", [Say("Hello.")])
    other_adapter = make_harness(framework, store, user_id="bob")  # same session id, another user
    harness.switch_user("bob")                                       # the same adapter, another user
    for intruder in (harness, other_adapter):
        # one class for every identity refusal; still a PolicyError for code that caught the store's
        with pytest.raises(IdentityError, match="belongs to another principal") as info:
            intruder.user_turn("Hi, I'm in your session.", [Say("Hello.")])
        assert isinstance(info.value, SessionOwnerError) and isinstance(info.value, PolicyError)
    assert [t["content"] for t in store.transcript("ses-1")] == ["Hi.", "Hello."]


def test_auto_searches_exactly_once_per_user_turn(framework, store):
    harness = make_harness(framework, store, trigger_mode="auto")
    harness.user_turn(PREFERENCE, [Call(WRITE_PREFERENCE), Say("Noted.")])
    harness.user_turn("Where is order 4411?", [Call(("lookup_order", {"order_id": "4411"})), Call(("memory_get", {"record_id": "mem_x"})),
                                               Say("Shipped.")])
    harness.user_turn("Format my answer about concise code.", [Call(("memory_search", {"query": "style"})), Say("Done.")])
    assert search_count(store, "ses-1") == 3, "one host search per user turn, none on assistant or tool turns"
    # a model that calls memory_search anyway is refused by its framework (the tool is not registered)
    refused = harness.script.requests[-1].messages[-1]
    assert refused["role"] == "tool" and '"results"' not in refused["content"] and '"ok": true' not in refused["content"]
    # the third turn's host search found the stored preference and appended it as a tool result
    first_call_of_turn3 = harness.script.requests[-2]
    appended = [m for m in first_call_of_turn3.messages if m["role"] == "tool" and m.get("name") == "memory_search"]
    assert appended and "concise answers with code first" in appended[-1]["content"]
    assert first_call_of_turn3.messages[-1]["role"] == "tool", "the host's result follows the user's message"


def test_auto_appends_nothing_when_the_search_is_empty(framework, store):
    harness = make_harness(framework, store, trigger_mode="auto")
    harness.user_turn("Hello there.", [Say("Hi!")])
    assert search_count(store, "ses-1") == 1
    assert not any(m["role"] == "tool" for m in harness.script.requests[0].messages)


def test_hybrid_counts_host_and_model_searches(framework, store):
    harness = make_harness(framework, store, trigger_mode="hybrid")
    harness.user_turn(PREFERENCE, [Call(WRITE_PREFERENCE), Say("Noted.")])
    harness.user_turn("How do I like answers?", [Call(("memory_search", {"query": "answer style"})), Say("Concise.")])
    assert search_count(store, "ses-1") == 3  # two host searches, one model search
    assert harness.script.requests[-1].tool_results("memory_search")[-1]["ok"]


@pytest.mark.parametrize("mode", ["tool_only", "auto", "hybrid"])
def test_nothing_from_the_store_enters_or_changes_the_prefix(framework, store, mode):
    harness = make_harness(framework, store, trigger_mode=mode)
    harness.user_turn(PREFERENCE, [Call(WRITE_PREFERENCE), Say("Noted.")])
    harness.user_turn("Answer style for code answers?", [Call(("memory_search", {"query": "answer style code"})), Say("Concise.")])
    harness.user_turn("I prefer long answers now, actually.", [Call(("memory_revise", {
        "action": "update", "record_id": harness.script.requests[1].tool_results("memory_write")[0]["record_id"],
        "content": "The user prefers long answers.", "reason": "the user changed their mind",
        "source_kind": "user_statement", "evidence": "I prefer long answers now"})), Say("Long answers it is.")])
    requests = harness.script.requests
    prefixes = {(r.system, repr(sorted(r.tools, key=lambda t: t["name"]))) for r in requests}
    assert len(prefixes) == 1, "system prompt and tool definitions are identical for every model call"
    stored = [r["content"] for r in store.store.query("SELECT content FROM records")]
    assert stored and not any(content in requests[-1].system for content in stored)
    for request in requests:
        for message in request.messages:
            if any(content in message["content"] for content in stored):
                assert message["role"] in ("tool", "user"), "store content reaches the model only as a tool result"


@pytest.mark.parametrize("bad", ["al/ice", "alice bob", "user:alice", "", "x" * 200, "ålice\u202e"])
def test_malformed_user_ids_are_refused(framework, store, bad):
    harness = make_harness(framework, store, user_id=bad)
    with pytest.raises(IdentityError):
        harness.user_turn(PREFERENCE, [Call(WRITE_PREFERENCE), Say("ok")])
    assert store.store.scalar("SELECT COUNT(*) FROM sessions") == 0


def test_a_conversation_goes_on_after_its_session_ended_in_a_new_linked_session(framework, store):
    events = []
    harness = make_harness(framework, store, listeners=[events.append])
    harness.user_turn("Hi.", [Say("Hello.")])
    first_run = harness.end()
    harness.user_turn(PREFERENCE, [Call(WRITE_PREFERENCE), Say("Noted.")])  # the same thread / session id, later
    written = harness.script.requests[-1].tool_results("memory_write")[0]
    assert written["ok"] and written["status"] == "confirmed"
    assert [t["content"] for t in store.transcript("ses-1")] == ["Hi.", "Hello."]
    assert [t["content"] for t in store.transcript("ses-1+2")] == [PREFERENCE, "Noted."]
    started = [e for e in events if e.type == "session_started"]
    assert [(e.session_id, e.continues) for e in started] == [("ses-1", None), ("ses-1+2", "ses-1")]
    assert store.store.scalar("SELECT evidence_session_id FROM records WHERE id = ?", (written["record_id"],)) == "ses-1+2"
    assert harness.memory.conversation_sessions("ses-1") == ["ses-1", "ses-1+2"]
    # ending the conversation ends its open part and queues that part's extraction
    second_run = harness.end()
    assert second_run and second_run != first_run
    assert store.store.scalar("SELECT COUNT(*) FROM sessions WHERE id LIKE 'ses-1%' AND ended_at IS NULL") == 0
    with pytest.raises(SessionClosedError, match="has already ended"):
        harness.end()
    # another adapter instance (a restarted process) continues it too, in the next part
    later = make_harness(framework, store)
    later.user_turn("Back again.", [Say("Welcome back.")])
    assert later.memory.conversation_sessions("ses-1") == ["ses-1", "ses-1+2", "ses-1+3"]
    assert [t["content"] for t in store.transcript("ses-1+3")] == ["Back again.", "Welcome back."]


def test_a_session_ended_by_another_adapter_instance_is_continued_not_written_to(framework, store):
    harness = make_harness(framework, store)
    harness.user_turn("Hi.", [Say("Hello.")])
    make_harness(framework, store).memory.end_session("ses-1")  # e.g. a clean-up job in another process
    harness.user_turn(PREFERENCE, [Call(WRITE_PREFERENCE), Say("Noted.")])
    assert [t["content"] for t in store.transcript("ses-1")] == ["Hi.", "Hello."]
    assert [t["content"] for t in store.transcript("ses-1+2")] == [PREFERENCE, "Noted."]


def test_an_id_naming_a_later_part_is_refused(framework, store):
    harness = make_harness(framework, store, session_id="chat+2")
    with pytest.raises(IdentityError, match=r"'\+<number>'"):
        harness.user_turn("Hi.", [Say("Hello.")])
    assert store.store.scalar("SELECT COUNT(*) FROM sessions") == 0


def test_another_principals_ended_session_is_not_continued(framework, store):
    store.grant("assistant", "user:bob", read=True, write=True, actor="test")
    bob = make_harness(framework, store, user_id="bob")
    bob.user_turn("Hi, I'm Bob.", [Say("Hello Bob.")])
    bob.end()
    alice = make_harness(framework, store)  # names bob's ended session id
    with pytest.raises(SessionOwnerError):
        alice.user_turn("Hi.", [Say("Hello.")])
    assert store.store.scalar("SELECT COUNT(*) FROM sessions") == 1
    assert [t["content"] for t in store.transcript("ses-1")] == ["Hi, I'm Bob.", "Hello Bob."]


def test_unicode_turns_round_trip_through_the_framework(framework, store):
    text = "Ich heiße Zoë 🦊 — 東京に住んでいます. \u202eevil\u202c and a tab\tand a quote \" and {braces}"
    harness = make_harness(framework, store)
    harness.user_turn(text, [Say("Schön! 🦊 {ok}")])
    assert [t["content"] for t in store.transcript("ses-1")] == [text, "Schön! 🦊 {ok}"]


def _stored_preferences(service):
    """Two trusted preferences and one conditional fact, saved in an earlier session."""
    earlier = service.start_session(agent_id="assistant", user_id="alice", session_id="earlier")
    for words, content, attribute in (("Please answer me in French.", "The user wants answers in French.", "language"),
                                      ("I prefer concise answers with code first.",
                                       "The user prefers concise answers with code first.", "answer_style"),
                                      ("I'm flying to Lisbon on 3 July.", "The user is flying to Lisbon on 3 July.", "trip")):
        earlier.record_turn("user", words)
        assert earlier.call_tool("memory_write", {"type": "semantic", "content": content, "attribute": attribute,
                                                  "source_kind": "user_statement", "evidence": words})["ok"]
    earlier.end()


@pytest.mark.parametrize("mode", ["tool_only", "hybrid"])
def test_the_ambient_profile_follows_the_policy_and_never_changes(framework, store, mode):
    _stored_preferences(store)
    harness = make_harness(framework, store, trigger_mode=mode, ambient=True)
    harness.user_turn(PREFERENCE, [Call(WRITE_PREFERENCE), Say("Noted.")])
    harness.user_turn("Answer me in German from now on.", [Call(("memory_write", {
        "type": "semantic", "content": "The user wants answers in German.", "attribute": "language",
        "source_kind": "user_statement", "evidence": "Answer me in German from now on"})), Say("Gut.")])
    harness.user_turn("What did I ask for?", [Call(("memory_search", {"query": "answer language"})), Say("German.")])
    requests = harness.script.requests
    prefixes = {(r.system, repr(sorted(r.tools, key=lambda t: t["name"]))) for r in requests}
    assert len(prefixes) == 1, "system prompt (profile included) and tools are identical for every model call"
    recorded = store.session_context("ses-1")
    system = requests[0].system
    profile = recorded["profile_text"]
    assert profile and [i["text"] for i in recorded["profile_items"]] == [
        "The user wants answers in French.", "The user prefers concise answers with code first."]
    assert system.index(memory_policy(mode)) < system.index(profile), "the profile comes after the policy"
    assert "Lisbon" not in system and "German" not in system  # conditional facts and later writes stay out
    assert recorded["system_text"] == system
    assert {t["name"] for t in recorded["offered_tools"]} >= {*EXPECTED_TOOLS[mode], "lookup_order"}
    assert sorted(t["name"] for t in recorded["memory_tools"]) == EXPECTED_TOOLS[mode]
    # the next session gets the profile as it is now
    harness.end()
    later = make_harness(framework, store, trigger_mode=mode, ambient=True, session_id="ses-2")
    later.user_turn("Hi.", [Say("Hallo.")])
    assert "German" in later.script.requests[0].system and "French" not in later.script.requests[0].system


def test_the_ambient_profile_is_off_unless_enabled(framework, store):
    _stored_preferences(store)
    harness = make_harness(framework, store)
    harness.user_turn("Hello there.", [Say("Hi!")])
    assert "French" not in harness.script.requests[0].system
    recorded = store.session_context("ses-1")
    assert recorded["ambient_enabled"] is False and recorded["profile_text"] is None
    assert recorded["system_text"] == harness.script.requests[0].system


def test_forgetting_a_profile_record_takes_it_out_of_the_running_session(framework, store):
    _stored_preferences(store)
    french = store.store.scalar("SELECT id FROM records WHERE content = 'The user wants answers in French.'")
    harness = make_harness(framework, store, ambient=True)
    harness.user_turn("Forget that I want French.", [Call(("memory_forget", {"record_id": french, "reason": "asked"})),
                                                      Say("Forgotten.")])
    harness.user_turn("Hi.", [Say("Hello.")])
    systems = [r.system for r in harness.script.requests]
    assert "answers in French" in systems[0]
    after = systems[1:]
    assert len(set(after)) == 1, "after the forget the prefix is stable again"
    assert "French" not in after[0] and "[forgotten]" in after[0] and after[0].count("About this user") == 1
    assert "concise answers with code first" in after[0]
