"""Every model role on an OpenAI-compatible server, chosen from settings by the factory and run
through the service: extraction end to end, the reviewer failing closed, query rewriting, the
host-memory decider and the entailment judge. The server is real HTTP on loopback."""

from __future__ import annotations

import pytest

from memory_core.errors import InvalidInputError
from memory_core.hostmem import HostMemory
from memory_core.hostmem.decider import decider_name
from memory_core.llm.factory import build_role_models
from memory_core.service import MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder
from tests.helpers import write
from tests.unit.extract.helpers import ended_session, facts, records

from .chat_server import answer, answer_json, http_error, refused_port_url

TURNS = [("user", "I prefer concise answers."), ("assistant", "Will do."), ("user", "I'm flying to Tokyo next Tuesday.")]
EXTRACTION = {
    "candidates": [
        {"type": "semantic", "content": "The user prefers concise answers.", "attribute": "answer_style",
         "evidence": "I prefer concise answers.", "evidence_turn": 0, "source_kind": "user_statement"},
        {"type": "semantic", "content": "The user is flying to Tokyo next Tuesday.", "evidence": "I'm flying to Tokyo next Tuesday.",
         "evidence_turn": 2, "review_at": {"expression": "next Tuesday", "value": "2026-03-10"}},
    ],
    "summary": {"content": "Alice set her answer style and mentioned a Tokyo trip.", "evidence": "I prefer concise answers.",
                "evidence_turn": 0},
}
ACCEPT = {"verdict": "accept", "reason": "stated plainly"}


def served(url: str, **sections) -> dict:
    """Settings sections that point the openai_compatible provider at ``url``."""
    return {"openai_compatible": {"base_url": url, "model": "test-model", "max_retries": 0, "timeout_s": 10}, **sections}


@pytest.fixture
def open_service(tmp_path, clock):
    opened = []

    def make(**sections):
        svc = MemoryService.open(tmp_path / f"m{len(opened)}.sqlite", default_settings(**sections), clock=clock,
                                 embedder=HashingEmbedder())
        svc.grant("assistant", "user:alice", read=True, write=True, actor="test")
        opened.append(svc)
        return svc

    yield make
    for svc in opened:
        svc.close()


def test_extraction_runs_end_to_end_through_the_server(chat_server, open_service):
    service = open_service(**served(chat_server.url, extraction={"extractor": "openai_compatible", "reviewer": "openai_compatible"}))
    # a weak model: the extraction arrives in prose and a code fence, one review needs the repair request
    chat_server.queue(answer(f"Here are the memories:\n```json\n{__import__('json').dumps(EXTRACTION)}\n```"),
                      answer("accept"), answer_json(ACCEPT), answer_json(ACCEPT), answer_json(ACCEPT))
    _, run_id = ended_session(service, TURNS)
    detail = service.run_extraction(run_id)
    assert detail.status == "succeeded", detail.run["error"]
    assert detail.run["extractor"] == "openai_compatible:test-model"
    assert detail.run["reviewer"] == "openai_compatible:test-model"
    rows = {r["content"]: r for r in facts(service)}
    assert rows["The user prefers concise answers."]["source_kind"] == "user_statement"
    assert rows["The user is flying to Tokyo next Tuesday (2026-03-10)."]["review_at"] == "2026-03-11T00:00:00.000000Z"
    assert records(service, source_kind="session_summary")[0]["content"] == "Alice set her answer style and mentioned a Tokyo trip."
    bodies = chat_server.bodies()
    assert len(bodies) == 5  # extraction, a review and its repair, two reviews
    assert "[turn 2 | user |" in bodies[0]["messages"][1]["content"]
    assert bodies[0]["response_format"]["json_schema"]["name"] == "ExtractionOutput"
    assert "CANDIDATE (fact)" in bodies[1]["messages"][1]["content"]


def test_a_reviewer_answer_that_stays_invalid_fails_the_attempt_closed(chat_server, open_service):
    service = open_service(**served(chat_server.url, extraction={"reviewer": "openai_compatible"}))
    chat_server.queue(answer_json({"verdict": "maybe", "reason": "unsure"}), answer('{"verdict": "accept"'))
    _, run_id = ended_session(service, [("user", "I prefer tea.")])
    writes_before = service.store.scalar("SELECT COUNT(*) FROM write_log")
    detail = service.run_extraction(run_id)
    assert detail.status == "queued" and detail.run["attempts"] == 1
    assert detail.run["error"].startswith("the reviewer's model reply was not valid output (the model's answer stayed unusable after one repair request")
    assert records(service) == [] and service.store.scalar("SELECT COUNT(*) FROM write_log") == writes_before
    assert {c["outcome"] for c in detail.candidates} == {"not_written"}


@pytest.mark.parametrize("reply", [http_error(500, "CUDA out of memory"), None], ids=["http-500", "refused"])
def test_an_unreachable_or_failing_server_fails_the_attempt_closed(chat_server, open_service, reply):
    url = chat_server.url if reply else refused_port_url()
    if reply:
        chat_server.queue(reply)
    service = open_service(**served(url, extraction={"extractor": "openai_compatible"}))
    _, run_id = ended_session(service, TURNS)
    detail = service.run_extraction(run_id)
    assert detail.status == "queued" and records(service) == []
    assert detail.run["error"].startswith("the model API failed" if reply else "the model server could not be reached")


def test_the_key_never_reaches_the_store(chat_server, open_service, monkeypatch):
    monkeypatch.setenv("LOCAL_LLM_KEY", "sk-never-logged-42")
    chat_server.queue(http_error(401, "bad key sk-never-logged-42"))
    sections = served(chat_server.url, extraction={"extractor": "openai_compatible"})
    sections["openai_compatible"]["api_key_env"] = "LOCAL_LLM_KEY"
    service = open_service(**sections)
    _, run_id = ended_session(service, TURNS)
    detail = service.run_extraction(run_id)
    assert "[redacted]" in detail.run["error"]
    assert chat_server.requests[0]["headers"]["authorization"] == "Bearer sk-never-logged-42"
    for table in ("extraction_runs", "extraction_attempts", "events"):
        assert "sk-never-logged-42" not in str([tuple(r) for r in service.store.query(f"SELECT * FROM {table}")])


def test_query_rewriting_through_the_server(chat_server, open_service):
    service = open_service(**served(chat_server.url, retrieval={"rewrite_enabled": True, "rewrite_provider": "openai_compatible"}))
    alice = service.start_session(agent_id="assistant", user_id="alice")
    trip = write(alice, "The user plans a Lisbon trip in May.", attribute="trip")
    chat_server.queue(answer_json({"query": "Lisbon trip plans"}))
    response = service.search(agent_id="assistant", user_id="alice", query="what did I say about it?",
                              context="user: I'm planning the Lisbon trip.")
    assert response.explanation.rewrite_status == "rewritten" and response.record_ids == [trip]
    assert "Lisbon trip" in chat_server.bodies()[0]["messages"][1]["content"]
    chat_server.queue(http_error(503, "overloaded"))
    response = service.search(agent_id="assistant", user_id="alice", query="what did I say about it?", context="…")
    assert response.explanation.rewrite_status == "failed: api_error; used the raw query"


def test_the_host_memory_decider_through_the_server(chat_server, open_service):
    service = open_service(**served(chat_server.url, host_memory={"decider": "openai_compatible"}))
    assert decider_name(service) == "openai_compatible:test-model"
    host = HostMemory(service)
    chat_server.queue(answer_json({"draft": "Try a stir-fry.", "gaps": ["user's diet"]}))
    gaps, reason, draft = host.model.find("What should I cook?", "user: What should I cook?", 3)
    assert [g.query for g in gaps] == ["user's diet"] and draft == "Try a stir-fry."
    chat_server.queue(answer("no idea"), answer("still no idea"))
    gaps, reason, _ = host.model.find("What should I cook?", "user: What should I cook?", 3)
    assert gaps == [] and "invalid_output" in reason  # a failure issues nothing


def test_the_entailment_judge_through_the_server_falls_back_offline_on_failure(chat_server, open_service):
    service = open_service(**served(chat_server.url, write={"entailment_judge": "openai_compatible"}))
    chat_server.queue(answer_json({"entailed": True, "reason": "the quote says so"}))
    verdict = service.judge.judge("I live in Oslo.", "The user lives in Oslo.")
    assert verdict.entailed and verdict.judge == "openai_compatible"
    chat_server.queue(http_error(500))
    verdict = service.judge.judge("I live in Oslo.", "The user lives in Oslo.")
    assert "hosted judge unavailable" in verdict.reason


def test_roles_naming_one_model_share_a_client_and_role_models_override_it():
    settings = default_settings(**served("http://127.0.0.1:9/v1", extraction={"extractor": "openai_compatible", "reviewer": "openai_compatible"},
                                         retrieval={"rewrite_provider": "openai_compatible"}))
    settings.openai_compatible.role_models["rewrite"] = "small-model"
    models = build_role_models(settings)
    assert models.extractor is models.reviewer and models.extractor.model == "test-model"
    assert models.rewrite.model == "small-model"
    assert models.host_memory is None  # auto without an Anthropic key: the rules
    assert models.describe() == {"extractor": "openai_compatible:test-model", "reviewer": "openai_compatible:test-model",
                                 "rewrite": "openai_compatible:small-model", "host_memory": None, "entailment": None}


@pytest.mark.parametrize(("sections", "missing"), [
    ({"extraction": {"extractor": "openai_compatible"}}, "openai_compatible.base_url"),
    ({"extraction": {"reviewer": "openai_compatible"}, "openai_compatible": {"base_url": "http://127.0.0.1:9/v1"}},
     "openai_compatible.model"),
])
def test_a_role_on_openai_compatible_without_a_server_or_model_is_refused_before_anything_is_created(tmp_path, clock, sections, missing):
    path = tmp_path / "never.sqlite"
    with pytest.raises(InvalidInputError) as raised:
        MemoryService.open(path, default_settings(**sections), clock=clock, embedder=HashingEmbedder())
    assert missing in raised.value.message
    assert not path.exists()


def test_role_base_urls_give_a_role_its_own_server_and_a_role_without_one_still_needs_the_default():
    settings = default_settings(**served("http://127.0.0.1:9/v1", extraction={"extractor": "openai_compatible"},
                                         retrieval={"rewrite_provider": "openai_compatible"}))
    settings.openai_compatible.role_base_urls["rewrite"] = "http://127.0.0.1:10/v1"
    models = build_role_models(settings)
    assert models.extractor.base_url == "http://127.0.0.1:9/v1" and models.rewrite.base_url == "http://127.0.0.1:10/v1"
    assert models.extractor is not models.rewrite  # same model name, another server: another client
    assert "127.0.0.1:10" in str(models.rewrite._client.base_url)

    only_rewrite = default_settings(openai_compatible={"model": "m", "role_base_urls": {"rewrite": "http://127.0.0.1:10/v1"}},
                                    retrieval={"rewrite_provider": "openai_compatible"})
    assert build_role_models(only_rewrite).rewrite.base_url == "http://127.0.0.1:10/v1"  # no default needed
    only_rewrite.extraction.extractor = "openai_compatible"
    with pytest.raises(InvalidInputError) as raised:
        build_role_models(only_rewrite)
    assert raised.value.message.startswith("extractor use the openai_compatible provider") and "rewrite" not in raised.value.message
