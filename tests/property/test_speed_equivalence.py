"""The issue 16 follow-up's faster paths give exactly what the plain ones gave: the trace encoder
(orjson) stores the values the standard encoder stores, lazy token counting decides the same, and
the collapse shortcut keeps and absorbs the same items."""

import json

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memory_core.retrieve.budget import fit_budget
from memory_core.retrieve.collapse import collapse_near_duplicates
from memory_core.store.db import dumps, dumps_compressed, loads

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(st.one_of(st.text(max_size=10), st.integers(-5, 5)), children, max_size=5),
    ),
    max_leaves=30,
)


@given(json_values)
def test_the_trace_encoder_stores_what_the_standard_encoder_stores(value):
    assert loads(dumps_compressed(value)) == json.loads(dumps(value))


def test_numpy_scalars_and_tuples_are_stored_as_the_standard_encoder_stores_them():
    value = {"f": np.float64(0.25), "g": np.float32(0.5), "i": np.int64(3), "t": (1, "x"), 7: "seven"}
    assert loads(dumps_compressed(value)) == json.loads(dumps(value))


@given(st.lists(st.integers(1, 400), max_size=40), st.integers(1, 2000), st.integers(1, 50))
def test_lazy_costs_decide_the_same_and_stop_at_the_limit(costs, budget, limit):
    read = []

    def lazy():
        for cost in costs:
            read.append(cost)
            yield cost

    assert fit_budget(lazy(), budget, limit, len(costs)) == fit_budget(costs, budget, limit)
    kept = sum(1 for d, _ in fit_budget(costs, budget, limit) if d in ("keep", "truncate"))
    if kept == limit:  # nothing after the item that filled the limit was counted
        decisions = fit_budget(costs, budget, limit)
        last = max(i for i, (d, _) in enumerate(decisions) if d in ("keep", "truncate"))
        assert len(read) == last + 1


def _reference_collapse(keys, vectors, threshold):
    kept, kept_rows, absorbed = [], [], {}
    gram = np.einsum("ij,kj->ik", vectors, vectors)  # the same products as the library
    for i, key in enumerate(keys):
        if kept_rows and (gram[i, kept_rows] >= threshold).any():
            sims = gram[i, kept_rows]
            j = int(np.argmax(sims))
            absorbed[key] = (kept[j], float(sims[j]))
            continue
        kept.append(key)
        kept_rows.append(i)
    return kept, absorbed


@given(st.integers(1, 40), st.integers(2, 8), st.floats(0.3, 0.999), st.integers(0, 2**32 - 1))
def test_collapse_matches_the_plain_greedy_walk(n, dim, threshold, seed):
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, dim)).astype(np.float32)
    vectors[rng.random(n) < 0.3] = vectors[0]
    vectors[rng.random(n) < 0.1] = 0.0  # records without a vector
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = np.where(norms > 0, vectors / np.where(norms > 0, norms, 1), 0).astype(np.float32)
    keys = [f"k{i}" for i in range(n)]
    kept, absorbed = collapse_near_duplicates(keys, vectors, threshold)
    ref_kept, ref_absorbed = _reference_collapse(keys, vectors, threshold)
    assert kept == ref_kept
    assert {k: v[0] for k, v in absorbed.items()} == {k: v[0] for k, v in ref_absorbed.items()}


def test_rows_written_with_zlib_are_still_read():
    value = {"stages": [{"name": "dense", "outputs": {"candidates": [{"id": "mem_1", "cosine": 0.5}]}}], "é": "ü"}
    import zlib

    old_row = b"Z1" + zlib.compress(dumps(value).encode(), 1)
    assert loads(old_row) == value
    assert dumps_compressed(value).startswith(b"L4") and loads(dumps_compressed(value)) == value
