"""Dense search on PostgreSQL runs in SQL (pgvector) under the hard filter: exact below
``postgres.hnsw_min_records``, through an HNSW index above it."""

import numpy as np
import pytest

from memory_core import MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder
from tests.helpers import write

TOPICS = ["sushi", "ramen", "peanuts", "cycling", "jazz", "Lisbon", "Porto", "python", "chess", "tennis"]


def _fill(svc, n):
    svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
    svc.grant("assistant", "user:bob", read=False, write=True, actor="t")
    a = svc.start_session(agent_id="assistant", user_id="alice")
    for i in range(n):
        write(a, f"Note {i}: the user mentioned {TOPICS[i % 10]} and {TOPICS[(i * 3) % 10]} on day {i}.", attribute=f"n{i}")


@pytest.fixture
def pg_service(new_target, clock):
    made = []

    def make(**postgres):
        settings = default_settings(postgres=postgres, retrieval={"lexical_max_df_share": 1.0})
        svc = MemoryService.open(new_target("postgresql"), settings, clock=clock, embedder=HashingEmbedder())
        made.append(svc)
        return svc

    yield make
    for svc in made:
        svc.close()


def test_dense_search_is_an_exact_sql_scan_below_the_hnsw_size(pg_service):
    svc = pg_service()
    _fill(svc, 30)
    response = svc.search(agent_id="assistant", user_id="alice", query="sushi and ramen")
    dense = next(s for s in response.trace.stages if s.name == "dense")
    assert dense.outputs["index"]["engine"] == "pgvector" and dense.outputs["index"]["method"] == "exact"
    # the cosines it reports are the stored vectors' (checked against numpy)
    query = svc.embedder.embed(["sushi and ramen"])[0]
    for cand in dense.outputs["candidates"][:5]:
        vec = np.frombuffer(svc.store.scalar("SELECT embedding FROM records WHERE id = ?", (cand["id"],)), dtype=np.float32)
        assert cand["cosine"] == pytest.approx(float(vec @ query), abs=1e-4)


def test_above_the_size_an_hnsw_index_serves_the_same_top_results(pg_service):
    svc = pg_service(hnsw_min_records=40)
    _fill(svc, 60)
    exact = [r.record_id for r in svc.search(agent_id="assistant", user_id="alice", query="jazz in Porto").results]
    svc.index._maybe_build_hnsw(wait=True)
    assert svc.index.has_hnsw()
    # 60 rows: left alone the planner rightly prefers a scan; make it use the index to test that path
    svc.store.conn.execute_native("SET enable_seqscan = off")
    plan = "\n".join(r[0] for r in svc.store.query(
        "EXPLAIN SELECT seq FROM records r ORDER BY (r.embedding_vec::vector(%d)) <#> ?::vector(%d) LIMIT 5" % (svc.embedder.dim, svc.embedder.dim),
        ("[" + ",".join(["0.1"] * svc.embedder.dim) + "]",)))
    assert "records_embedding_hnsw" in plan
    response = svc.search(agent_id="assistant", user_id="alice", query="jazz in Porto")
    dense = next(s for s in response.trace.stages if s.name == "dense")
    assert dense.outputs["index"]["method"] == "approximate"
    assert [r.record_id for r in response.results][:3] == exact[:3]


def test_the_dense_query_never_scores_an_unreadable_record(pg_service):
    svc = pg_service()
    _fill(svc, 10)
    b = svc.start_session(agent_id="assistant", user_id="bob")
    hidden = write(b, "Bob loves sushi and ramen more than anything.", attribute="food")
    response = svc.search(agent_id="assistant", user_id="alice", query="Bob loves sushi and ramen more than anything")
    ids = {c["id"] for s in response.trace.stages if isinstance(s.outputs, dict) for c in s.outputs.get("candidates", [])}
    assert ids and hidden not in ids


def test_a_mask_switching_off_more_rows_than_a_statement_has_parameters_still_searches(pg_service):
    # the empty path's lifecycle probe switches off every live admitted row: 600K at 1M records,
    # past PostgreSQL's 65,535 parameters per statement if each seq were its own placeholder
    from memory_core.index.pg_vector import _make_mask

    svc = pg_service()
    _fill(svc, 12)
    live = svc.store.query("SELECT seq FROM records ORDER BY seq")
    kept, dropped = int(live[0][0]), [int(r[0]) for r in live[1:]]
    seqs = np.array([kept, *dropped, *range(10_000_000, 10_070_000)], dtype=np.int64)
    mask = _make_mask(seqs, "r.status != ?", ["deleted"])
    mask[1:] = False
    hits = svc.index.search(svc.embedder.embed(["sushi"])[0], 5, mask)
    assert [seq for seq, _ in hits] == [kept]
