"""The bounded query-vector cache: hits, eviction, model identity and the trace."""

import numpy as np
import pytest

from memory_core.embed.cache import QueryVectorCache
from tests.fakes import HashingEmbedder

from .helpers import search, write


class CountingEmbedder(HashingEmbedder):
    def __init__(self, version="1"):
        super().__init__()
        self.model_version = version
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        return super().embed(texts)


def test_the_cache_is_bounded_and_least_recently_used_goes_first():
    cache, embedder = QueryVectorCache(2), CountingEmbedder()
    a, hit = cache.vector(embedder, "alpha")
    assert not hit
    assert cache.vector(embedder, "alpha")[1] and embedder.calls == 1
    cache.vector(embedder, "beta")
    cache.vector(embedder, "alpha")  # alpha is now the most recent
    cache.vector(embedder, "gamma")  # evicts beta
    assert len(cache) == 2
    assert cache.vector(embedder, "alpha")[1] and not cache.vector(embedder, "beta")[1]
    assert np.array_equal(a, embedder.embed(["alpha"])[0])
    with pytest.raises(ValueError):
        a[0] = 5.0  # cached vectors are read-only


def test_another_model_version_never_gets_a_cached_vector():
    cache = QueryVectorCache(10)
    cache.vector(CountingEmbedder("1"), "alpha")
    other = CountingEmbedder("2")
    assert not cache.vector(other, "alpha")[1] and other.calls == 1
    cache.clear()
    assert len(cache) == 0


def test_a_zero_size_cache_embeds_every_time():
    cache, embedder = QueryVectorCache(0), CountingEmbedder()
    cache.vector(embedder, "alpha")
    assert not cache.vector(embedder, "alpha")[1] and embedder.calls == 2 and len(cache) == 0


def test_searches_reuse_the_query_vector_and_the_trace_says_so(service, alice):
    write(alice, "The user's locker code is 4471-ZEBRA.", attribute="locker_code")
    first = search(service, alice, "locker code")
    second = search(service, alice, "locker code")
    assert first.trace.stage("query_embedding").outputs["cache"] == "miss"
    assert second.trace.stage("query_embedding").outputs["cache"] == "hit"
    assert second.record_ids == first.record_ids
    assert second.results[0].explanation.cosine == first.results[0].explanation.cosine
    retriever = service.retriever
    retriever.embedder = CountingEmbedder("2")  # a different model: the cached vector must not be used
    third = search(service, alice, "locker code")
    assert third.trace.stage("query_embedding").outputs["cache"] == "miss" and retriever.embedder.calls == 1


def test_the_cache_can_be_switched_off_per_search(make_service):
    service = make_service(query_cache_size=0)
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    alice = service.start_session(agent_id="assistant", user_id="alice")
    search(service, alice, "locker code")
    assert search(service, alice, "locker code").trace.stage("query_embedding").outputs["cache"] == "miss"
