"""Query rewriting through the Anthropic client over a fake transport (never the network)."""

import json

import httpx2 as httpx  # the installed anthropic SDK (2.x) is built on httpx2, which mirrors httpx
from pydantic import SecretStr

from memory_core.llm.anthropic_client import StructuredLLM
from memory_core.settings import AnthropicSettings

from .helpers import search, write


class FakeMessages:
    """Answers /v1/messages from a queue: a str is the reply text, "timeout" raises a read timeout."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(json.loads(request.content))
        reply = self.replies.pop(0)
        if reply == "timeout":
            raise httpx.ReadTimeout("timed out", request=request)
        body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
                "content": [{"type": "text", "text": reply}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 5, "output_tokens": 5}}
        return httpx.Response(200, json=body)


def _llm(fake):
    settings = AnthropicSettings(api_key=SecretStr("test-key"), max_retries=0, timeout_s=5)
    return StructuredLLM(settings, http_client=httpx.Client(transport=httpx.MockTransport(fake)))


def _principal(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    return service.start_session(agent_id="assistant", user_id="alice")


CONTEXT = "user: I'm planning the Lisbon trip.\nassistant: Great!\nuser: what did I say about it before?"


def test_a_rewritten_query_drives_the_search_and_both_forms_are_logged(make_service):
    fake = FakeMessages('{"query": "Lisbon trip plans"}')
    service = make_service(llm=_llm(fake), rewrite_enabled=True)
    alice = _principal(service)
    trip = write(alice, "The user plans a Lisbon trip in May.", attribute="trip")
    response = search(service, alice, "what did I say about it before?", context=CONTEXT)
    assert response.explanation.rewritten_query == "Lisbon trip plans"
    assert response.explanation.rewrite_status == "rewritten"
    assert response.record_ids == [trip]
    assert response.results[0].explanation.rewritten_query == "Lisbon trip plans"
    assert "Lisbon trip" in fake.requests[0]["messages"][0]["content"]  # the context reached the model
    row = service.store.query_one("SELECT raw_query, rewritten_query, rewrite_status FROM search_log WHERE id = ?", (response.search_id,))
    assert tuple(row) == ("what did I say about it before?", "Lisbon trip plans", "rewritten")
    assert response.trace.stage("query_embedding").inputs["query"] == "Lisbon trip plans"


def test_a_timeout_falls_back_to_the_raw_query_and_says_so(make_service):
    fake = FakeMessages("timeout")
    service = make_service(llm=_llm(fake), rewrite_enabled=True)
    alice = _principal(service)
    write(alice, "The user plans a Lisbon trip in May.", attribute="trip")
    response = search(service, alice, "Lisbon trip", context=CONTEXT)
    assert response.explanation.rewritten_query is None
    assert response.explanation.rewrite_status == "failed: timeout; used the raw query"
    assert response.trace.stage("query_embedding").inputs["query"] == "Lisbon trip"
    assert len(response.results) == 1


def test_invalid_model_output_falls_back(make_service):
    service = make_service(llm=_llm(FakeMessages("I think you mean the trip.")), rewrite_enabled=True)
    alice = _principal(service)
    response = search(service, alice, "Lisbon trip", context=CONTEXT)
    assert response.explanation.rewrite_status == "failed: invalid_output; used the raw query"


def test_rewrite_is_off_by_default_and_skipped_without_context_or_key(make_service):
    fake = FakeMessages()
    service = make_service(llm=_llm(fake))
    alice = _principal(service)
    assert search(service, alice, "Lisbon").explanation.rewrite_status == "disabled"
    assert search(service, alice, "Lisbon", rewrite=True).explanation.rewrite_status == "skipped: no current-turn context"
    assert fake.requests == []
    keyless = make_service("keyless.sqlite", rewrite_enabled=True)
    bob = _principal(keyless)
    status = search(keyless, bob, "Lisbon", context=CONTEXT).explanation.rewrite_status
    assert status == "unavailable: no Anthropic API key is configured"


def test_the_tool_gives_the_rewriter_the_session_transcript(make_service):
    fake = FakeMessages('{"query": "Lisbon trip plans"}')
    service = make_service(llm=_llm(fake), rewrite_enabled=True, rewrite_context_turns=2)
    alice = _principal(service)
    for role, text in (("user", "old turn about cats"), ("user", "I'm planning the Lisbon trip."), ("assistant", "Nice.")):
        alice.record_turn(role, text)
    result = alice.call_tool("memory_search", {"query": "what did I say about it?"})
    assert result["ok"] and result["explanation"]["rewritten_query"] == "Lisbon trip plans"
    prompt = fake.requests[0]["messages"][0]["content"]
    assert "Lisbon trip" in prompt and "cats" not in prompt
