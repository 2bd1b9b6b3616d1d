"""Retriever.search_batch: many searches at once, batch-first, each one the same as alone and logged
as its own search; an invalid request anywhere stops the batch before anything runs."""

import pytest

from memory_core import MemoryService
from memory_core.errors import InvalidInputError
from memory_core.retrieve import SearchRequest
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder

from .helpers import write

QUERIES = ["what does the user drink?", "who is Priya?", "where does the user live?", "favourite sport", "bread recipe"]


class CountingEmbedder(HashingEmbedder):
    """The test embedder, counting its calls and the texts of each."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def embed(self, texts):
        self.calls.append(len(texts))
        return super().embed(texts)


def _service(make_target, clock, name, **retrieval):
    embedder = CountingEmbedder()
    service = MemoryService.open(make_target(name), default_settings(retrieval=retrieval) if retrieval else default_settings(),
                                 clock=clock, embedder=embedder)
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    alice = service.start_session(agent_id="assistant", user_id="alice")
    for text, attribute in (("The user drinks green tea.", "drink"), ("Priya leads the Atlas migration.", "priya_role"),
                            ("The user lives in Porto.", "home_city"), ("The user plays football on Sundays.", "sport")):
        write(alice, text, attribute=attribute)
    return service, embedder


def _requests():
    return [SearchRequest(agent_id="assistant", user_id="alice", query=q) for q in QUERIES]


def _answers(responses):
    return [(r.empty_reason, [(x.content, x.explanation.cosine, x.explanation.fused_score) for x in r.results]) for r in responses]


def test_a_batch_answers_as_the_searches_would_alone_and_logs_each(make_target, clock):
    batched, embedder = _service(make_target, clock, "batch.sqlite")
    alone, _ = _service(make_target, clock, "alone.sqlite")
    try:
        responses = batched.search_batch(_requests())
        single = [alone.search(request) for request in _requests()]
        assert _answers(responses) == _answers(single)
        assert [r.request.query for r in responses] == QUERIES and len({r.search_id for r in responses}) == len(QUERIES)
        logged = batched.store.query("SELECT id, raw_query FROM search_log ORDER BY seq")
        assert [(row["id"], row["raw_query"]) for row in logged] == [(r.search_id, r.request.query) for r in responses]
        # the distinct queries were embedded in one call before the searches ran, which found them cached
        assert len(QUERIES) in embedder.calls
        assert {r.trace.stage("query_embedding").outputs["cache"] for r in responses} == {"hit"}
    finally:
        batched.close()
        alone.close()


def test_an_invalid_request_stops_the_batch_before_anything_runs(make_target, clock):
    service, _ = _service(make_target, clock, "memory.sqlite")
    try:
        bad = _requests()
        bad[3] = SearchRequest(agent_id="assistant", user_id="alice", query="x", limit=0)
        with pytest.raises(InvalidInputError, match=r"requests\[3\]: limit must be an integer") as raised:
            service.search_batch(bad)
        assert raised.value.details == {"field": "limit", "position": 3}
        assert service.store.scalar("SELECT COUNT(*) FROM search_log") == 0
    finally:
        service.close()


def test_without_a_query_cache_each_search_embeds_its_own_query(make_target, clock):
    service, embedder = _service(make_target, clock, "memory.sqlite", query_cache_size=0)
    try:
        embedder.calls.clear()
        responses = service.retriever.search_batch(_requests())
        assert len(responses) == len(QUERIES) and embedder.calls == [1] * len(QUERIES)
        assert service.retriever.search_batch([]) == []
    finally:
        service.close()


def test_a_batch_runs_with_the_settings_it_is_given(make_target, clock):
    service, _ = _service(make_target, clock, "memory.sqlite")
    try:
        opened = service.settings.retrieval.model_copy(update={"cosine_floor": -1.0, "name_model_floor": -1.0})
        (shipped,) = service.retriever.search_batch(_requests()[-1:])
        (open_gate,) = service.retriever.search_batch(_requests()[-1:], settings=opened)
        assert shipped.empty_reason is not None and open_gate.results  # "bread recipe": only the open gate lets it through
    finally:
        service.close()
