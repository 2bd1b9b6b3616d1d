"""The approximate backend never returns a row outside the allowed mask, and its scores are exact."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core.index.ann import IvfBackend
from memory_core.index.exact import ExactBackend


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 300), seed=st.integers(0, 2**32 - 1), share=st.floats(0.0, 1.0), k=st.integers(1, 40),
    deleted=st.floats(0.0, 0.5), nprobe=st.integers(1, 8),
)
def test_ivf_search_respects_the_mask_exactly(n, seed, share, k, deleted, nprobe):
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ivf = IvfBackend(16, min_records=1, exact_below_allowed=0, nprobe=nprobe, background=False)
    exact = ExactBackend(16)
    for i, v in enumerate(vectors):
        ivf.upsert(1000 + i, v)
        exact.upsert(1000 + i, v)
    for i in np.flatnonzero(rng.random(n) < deleted):
        ivf.delete(1000 + int(i))
        exact.delete(1000 + int(i))
    allowed = rng.random(n) < share
    query = vectors[rng.integers(0, n)]
    hits = ivf.search(query, k, allowed)
    readable = {1000 + int(i) for i in np.flatnonzero(allowed & exact.alive())}
    assert {seq for seq, _ in hits} <= readable  # never a row the mask (or deletion) excludes
    assert len(hits) == min(k, len(readable))  # a short approximate answer falls back to exact
    for seq, score in hits:
        assert abs(score - float(vectors[seq - 1000] @ query)) < 1e-5  # rescored with the exact vectors
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
