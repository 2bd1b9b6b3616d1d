"""Properties of the pure scoring functions, and of whole searches over arbitrary query text."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.retrieve.budget import fit_budget
from memory_core.retrieve.collapse import collapse_near_duplicates
from memory_core.retrieve.freshness import freshness_factor
from memory_core.retrieve.fuse import rrf_fuse
from memory_core.text import count_tokens, truncate_to_tokens
from memory_core.store.db import dumps
from tests.fakes import HashingEmbedder

ranked_lists = st.dictionaries(
    st.sampled_from(["dense", "lexical", "entity"]),
    st.lists(st.integers(0, 30), max_size=20, unique=True),
)


@given(ranked_lists, st.floats(1, 200))
def test_rrf_scores_are_sums_of_reciprocal_ranks_and_order_is_list_order_free(lists, k):
    fused = rrf_fuse(lists, k)
    expected = {}
    for items in lists.values():
        for rank, item in enumerate(items, start=1):
            expected[item] = expected.get(item, 0.0) + 1 / (k + rank)
    assert {i: pytest.approx(s) for i, s in fused} == expected
    scores = [s for _, s in fused]
    assert scores == sorted(scores, reverse=True)
    assert rrf_fuse(dict(reversed(list(lists.items()))), k) == fused


@given(st.floats(-1000, 100_000), st.floats(-1000, 100_000), st.floats(0.1, 3650), st.floats(0, 1))
def test_freshness_is_bounded_and_never_rewards_age(age_a, age_b, half_life, weight):
    fa, fb = freshness_factor(age_a, half_life, weight), freshness_factor(age_b, half_life, weight)
    assert 1 - weight - 1e-12 <= fa <= 1.0
    if age_a <= age_b:
        assert fa >= fb


@given(st.integers(1, 30), st.integers(2, 8), st.floats(0.5, 0.999), st.randoms(use_true_random=False))
def test_collapse_keeps_the_first_and_leaves_no_close_pair(n, dim, threshold, rnd):
    rng = np.random.default_rng(rnd.randint(0, 2**32 - 1))
    vectors = rng.normal(size=(n, dim)).astype(np.float32)
    vectors[rng.random(n) < 0.3] = vectors[0]  # force some exact duplicates
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    keys = list(range(n))
    kept, absorbed = collapse_near_duplicates(keys, vectors, threshold)
    assert kept[0] == 0 and sorted(kept + list(absorbed)) == keys
    for i, a in enumerate(kept):
        for b in kept[i + 1:]:
            assert float(vectors[a] @ vectors[b]) < threshold
    for key, (keeper, cosine) in absorbed.items():
        assert keeper in kept and keeper < key and cosine >= threshold


@given(st.lists(st.integers(1, 400), max_size=30), st.integers(50, 2000), st.integers(1, 50))
def test_budget_never_exceeds_budget_or_limit(costs, budget, limit):
    decisions = fit_budget(costs, budget, limit)
    kept = [(d, c) for (d, _), c in zip(decisions, costs) if d in ("keep", "truncate")]
    assert len(kept) <= limit
    assert sum(c for d, c in kept if d == "keep") <= budget
    assert all(d != "truncate" for d, _ in kept[1:])


@given(st.text(max_size=400), st.integers(1, 200))
def test_token_estimate_and_truncation(text, limit):
    assert count_tokens(text) >= 0
    cut = truncate_to_tokens(text, limit)
    assert count_tokens(cut) <= max(limit, count_tokens("…")) or cut == text


# -- whole searches ---------------------------------------------------------------------------------

_ID = re.compile(r"mem_[0-9a-f]{16}")


@pytest.fixture(scope="module")
def small_world(tmp_path_factory):
    svc = MemoryService.open(tmp_path_factory.mktemp("world") / "m.sqlite", load_settings(),
                             clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
    svc.grant("other", "user:bob", read=True, write=True, actor="t")
    a = svc.start_session(agent_id="assistant", user_id="alice")
    b = svc.start_session(agent_id="other", user_id="bob")
    texts = ["The user likes NEAR(sushi)* and \"quoted\" things.", "Priya leads AND/OR the Atlas migration.",
             "Deploy on Friday: content:secret -x", "Café résumé naïve 東京 emoji 🎉", "PR-1234 fixed v2.3.1 crash"]
    for i, text in enumerate(texts):
        assert a.call_tool("memory_write", {"type": "semantic", "content": text, "attribute": f"a{i}", "mentions": ["Priya"]})["ok"]
        assert b.call_tool("memory_write", {"type": "semantic", "content": "Bob: " + text, "attribute": f"b{i}", "mentions": ["Priya"]})["ok"]
    yield svc
    svc.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(query=st.text(min_size=1, max_size=120).filter(str.strip),
       hints=st.lists(st.text(min_size=1, max_size=20).filter(str.strip), max_size=3))
def test_any_query_runs_and_stays_inside_the_readable_scopes(small_world, query, hints):
    response = small_world.search(agent_id="assistant", user_id="alice", query=query, entity_hints=hints, historical=True)
    readable = {"user:alice", "agent:assistant/alice"}
    for record_id in set(_ID.findall(dumps(response.to_dict(include_records=False)))):
        assert small_world.record(record_id).scope in readable
    assert response.empty == (response.empty_reason is not None)
