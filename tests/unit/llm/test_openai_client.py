"""The OpenAI-compatible client against a real HTTP server on loopback (tests/unit/llm/chat_server.py):
structured output, the one repair request, every way a server or a weak model fails, and the key."""

from __future__ import annotations

import sys
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

from memory_core.errors import ExternalServiceError, MissingExtraError
from memory_core.llm.openai_client import OpenAICompatibleLLM, api_key_from_env
from memory_core.settings import OpenAICompatibleSettings

from .chat_server import answer, answer_json, cut_body, http_error, never_answer, raw_body, refused_port_url


class Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdict: Literal["accept", "reject"]
    reason: str


ACCEPT = {"verdict": "accept", "reason": "stated plainly"}


def make_llm(url: str, **overrides) -> OpenAICompatibleLLM:
    settings = OpenAICompatibleSettings(**{"base_url": url, "model": "test-model", "max_retries": 0, "timeout_s": 10, **overrides})
    return OpenAICompatibleLLM(settings, model=settings.model, api_key=api_key_from_env(settings))


def ask(llm, **kwargs):
    return llm.ask(system="You review memories.", prompt="CANDIDATE: tea", schema=Verdict, max_tokens=300, **kwargs)


def failure(llm, **kwargs) -> ExternalServiceError:
    with pytest.raises(ExternalServiceError) as raised:
        ask(llm, **kwargs)
    return raised.value


def test_a_valid_answer_is_returned_and_the_request_asks_for_the_json_schema(chat_server):
    chat_server.queue(answer_json(ACCEPT))
    assert ask(make_llm(chat_server.url)) == Verdict(**ACCEPT)
    (request,) = chat_server.requests
    body = request["body"]
    assert request["path"] == "/v1/chat/completions"
    assert body["model"] == "test-model" and body["max_tokens"] == 300 and body["temperature"] == 0.0
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == Verdict.model_json_schema()
    system, user = body["messages"]
    assert system["role"] == "system" and "You review memories." in system["content"] and '"verdict"' in system["content"]
    assert user == {"role": "user", "content": "CANDIDATE: tea"}


def test_prose_code_fences_and_think_blocks_around_the_object_are_skipped(chat_server):
    chat_server.queue(answer('<think>maybe {"verdict": "reject"} fits</think>Sure! Here it is:\n```json\n'
                             '{"verdict": "accept", "reason": "stated plainly"}\n```'))
    assert ask(make_llm(chat_server.url)) == Verdict(**ACCEPT)
    assert len(chat_server.requests) == 1


def test_malformed_json_gets_one_repair_request_saying_what_was_wrong(chat_server):
    chat_server.queue(answer('{"verdict": "accept", "reason": stated plainly}'), answer_json(ACCEPT))
    assert ask(make_llm(chat_server.url)) == Verdict(**ACCEPT)
    first, repair = chat_server.bodies()
    assert repair["messages"][:2] == first["messages"]
    assert repair["messages"][2] == {"role": "assistant", "content": '{"verdict": "accept", "reason": stated plainly}'}
    assert repair["messages"][3]["role"] == "user" and "no complete JSON object" in repair["messages"][3]["content"]


def test_a_schema_violation_that_survives_the_repair_fails_closed(chat_server):
    chat_server.queue(answer_json({"verdict": "maybe", "reason": "unsure"}), answer_json({"verdict": "accept"}))
    error = failure(make_llm(chat_server.url))
    assert error.details["kind"] == "invalid_output"
    assert "reason: Field required" in error.message and "verdict" in error.details["first_problem"]
    assert len(chat_server.requests) == 2  # exactly one repair request, never a third


def test_an_answer_cut_at_the_token_limit_is_asked_again_for_less(chat_server):
    chat_server.queue(answer('{"verdict": "accept", "reas', finish_reason="length"), answer_json(ACCEPT))
    assert ask(make_llm(chat_server.url)) == Verdict(**ACCEPT)
    retry = chat_server.bodies()[1]["messages"]
    assert [m["role"] for m in retry] == ["system", "user"]  # the cut-off text is not sent back
    assert "cut off at the output limit of 300 tokens" in retry[1]["content"]


def test_a_second_cut_off_answer_says_so(chat_server):
    cut = answer('{"verdict": "accept", "reas', finish_reason="length")
    chat_server.queue(cut, cut)
    error = failure(make_llm(chat_server.url))
    assert error.details["kind"] == "invalid_output" and "cut off at the output limit" in error.message


def test_an_empty_or_missing_answer_is_repaired_too(chat_server):
    chat_server.queue(answer(None), answer(""))
    error = failure(make_llm(chat_server.url))
    assert error.details["kind"] == "invalid_output" and "empty" in error.message


@pytest.mark.parametrize("reply", [
    raw_body(b'{"id": "chatcmpl-1", "choices": [{"message": '),
    raw_body(b"<html><body>502 Bad Gateway</body></html>", content_type="text/html"),
    raw_body(b'{"choices": []}'),
], ids=["malformed-json", "html", "no-choices"])
def test_a_body_that_is_no_chat_completion_is_an_invalid_response(chat_server, reply):
    chat_server.queue(reply)
    error = failure(make_llm(chat_server.url))
    assert error.details["kind"] == "invalid_response" and error.details["model"] == "test-model"


def test_a_body_cut_off_mid_stream_is_a_connection_failure(chat_server):
    chat_server.queue(cut_body())
    error = failure(make_llm(chat_server.url))
    assert error.details["kind"] == "connection" and "RemoteProtocolError" in error.message


def test_an_answer_slower_than_the_timeout_times_out(chat_server):
    chat_server.queue(never_answer())
    error = failure(make_llm(chat_server.url), timeout=0.2)
    assert error.details["kind"] == "timeout"
    assert len(chat_server.requests) == 1  # max_retries 0: given up, not retried


@pytest.mark.parametrize("status", [400, 401, 404, 429, 500, 503])
def test_http_errors_are_api_errors_with_their_status(chat_server, status):
    chat_server.queue(http_error(status, "model 'test-model' not found"))
    error = failure(make_llm(chat_server.url, structured_output="json_schema"))
    assert error.details["kind"] == "api_error" and error.details["status"] == status
    assert f"HTTP {status}" in error.message


def test_a_server_error_is_retried_as_the_settings_allow(chat_server):
    chat_server.queue(http_error(503, "loading model", headers={"retry-after-ms": "1"}), answer_json(ACCEPT))
    assert ask(make_llm(chat_server.url, max_retries=1)) == Verdict(**ACCEPT)
    assert len(chat_server.requests) == 2


def test_a_refused_connection_is_a_connection_failure():
    error = failure(make_llm(refused_port_url()))
    assert error.details["kind"] == "connection" and "refused" in error.message.lower()


def test_auto_steps_down_to_the_response_format_the_server_accepts_and_keeps_it(chat_server):
    chat_server.refused_formats = {"json_schema"}
    llm = make_llm(chat_server.url)
    chat_server.queue(answer_json(ACCEPT), answer_json(ACCEPT))
    assert ask(llm) == Verdict(**ACCEPT)
    assert [(b.get("response_format") or {}).get("type") for b in chat_server.bodies()] == ["json_schema", "json_object"]
    assert llm.response_format == "json_object"
    assert ask(llm) == Verdict(**ACCEPT)
    assert (chat_server.bodies()[-1].get("response_format") or {}).get("type") == "json_object"
    chat_server.refused_formats = {"json_schema", "json_object"}
    chat_server.queue(answer_json(ACCEPT))
    assert ask(llm) == Verdict(**ACCEPT)
    assert "response_format" not in chat_server.bodies()[-1] and llm.response_format == "prompt"
    assert '"verdict"' in chat_server.bodies()[-1]["messages"][0]["content"]  # the schema is still in the prompt


def test_a_fixed_response_format_is_never_stepped_down(chat_server):
    chat_server.refused_formats = {"json_schema"}
    error = failure(make_llm(chat_server.url, structured_output="json_schema"))
    assert error.details["status"] == 400 and len(chat_server.requests) == 1


def test_without_a_key_setting_nothing_from_the_environment_is_sent(chat_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-secret")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-secret")
    chat_server.queue(answer_json(ACCEPT))
    ask(make_llm(chat_server.url))
    headers = chat_server.requests[0]["headers"]
    assert "authorization" not in headers and "openai-organization" not in headers and "openai-project" not in headers
    assert "sk-real-openai-key" not in str(headers)


def test_the_key_comes_from_the_named_variable_and_never_reaches_an_error_or_repr(chat_server, monkeypatch):
    monkeypatch.setenv("TEST_SERVER_KEY", "sk-local-0123456789")
    chat_server.queue(http_error(401, "invalid key sk-local-0123456789 for Bearer sk-local-0123456789"))
    llm = make_llm(chat_server.url, api_key_env="TEST_SERVER_KEY")
    error = failure(llm)
    assert chat_server.requests[0]["headers"]["authorization"] == "Bearer sk-local-0123456789"
    assert "sk-local-0123456789" not in error.message and "[redacted]" in error.message
    assert "sk-local-0123456789" not in str(error.to_dict()) and "sk-local-0123456789" not in repr(llm)


def test_a_missing_openai_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # how Python reports a package that is not installed
    with pytest.raises(MissingExtraError) as raised:
        make_llm("http://127.0.0.1:9/v1")
    assert raised.value.message.endswith("pip install 'agent-memory[openai]'")
    assert raised.value.details["extra"] == "openai"


def test_odd_unicode_goes_out_and_comes_back_storable(chat_server):
    """Lone surrogates (which no UTF-8 body can carry) become U+FFFD, both ways; RTL marks and NUL pass."""
    chat_server.queue(answer_json({"verdict": "accept", "reason": "ok \ud800 \u202e\u05d0 \x00 end"}))
    llm = make_llm(chat_server.url)
    reply = llm.ask(system="s \udfff", prompt="lone \ud800 rtl \u202e\u05d0 nul \x00 pair \ud83d\ude00", schema=Verdict)
    assert reply.reason == "ok \ufffd \u202e\u05d0 \x00 end"
    reply.reason.encode("utf-8")  # storable
    sent = chat_server.bodies()[0]["messages"]
    assert sent[1]["content"] == "lone \ufffd rtl \u202e\u05d0 nul \x00 pair \U0001f600"
    assert sent[0]["content"].startswith("s \ufffd")


def test_concurrent_calls_on_one_client_all_succeed_while_the_format_steps_down(chat_server):
    import threading

    chat_server.refused_formats = {"json_schema"}
    chat_server.queue(*[answer_json(ACCEPT) for _ in range(8)])
    llm = make_llm(chat_server.url)
    results, errors = [], []

    def call():
        try:
            results.append(ask(llm))
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == [] and results == [Verdict(**ACCEPT)] * 8
    assert llm.response_format == "json_object"
    answered = [b for b in chat_server.bodies() if (b.get("response_format") or {}).get("type") == "json_object"]
    assert len(answered) == 8


def test_a_400_that_is_not_about_the_format_fails_at_every_step_and_changes_nothing(chat_server):
    chat_server.queue(*[http_error(400, "This model's maximum context length is 8192 tokens") for _ in range(3)])
    llm = make_llm(chat_server.url)
    error = failure(llm)
    assert error.details["status"] == 400 and "maximum context length" in error.message
    assert len(chat_server.requests) == 3  # json_schema, json_object, prompt: bounded
    assert llm.response_format == "json_schema"  # nothing answered lower, so nothing is kept
