"""Dense search on PostgreSQL runs in SQL (pgvector) under the hard filter: exact below
``postgres.ann_min_records`` (or when the filter admits at most ``postgres.exact_max_rows`` rows),
through an IVF index above it."""

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
        postgres.setdefault("dense_search", "sql")  # this file is about the SQL paths (the matrix: test_pg_matrix.py)
        settings = default_settings(postgres=postgres, retrieval={"lexical_max_df_share": 1.0})
        svc = MemoryService.open(new_target("postgresql"), settings, clock=clock, embedder=HashingEmbedder())
        made.append(svc)
        return svc

    yield make
    for svc in made:
        svc.close()


def test_dense_search_is_an_exact_sql_scan_below_the_index_size(pg_service):
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


def test_above_the_size_an_ivf_index_serves_the_same_top_results(pg_service):
    svc = pg_service(ann_min_records=40, exact_max_rows=0)
    _fill(svc, 60)
    exact = [r.record_id for r in svc.search(agent_id="assistant", user_id="alice", query="jazz in Porto").results]
    svc.index._maybe_build_ann(wait=True)
    assert svc.index.has_ann()
    # 60 rows: left alone the planner rightly prefers a scan; make it use the index to test that path
    svc.store.conn.execute_native("SET enable_seqscan = off")
    plan = "\n".join(r[0] for r in svc.store.query(
        "EXPLAIN SELECT seq FROM records r ORDER BY (r.embedding_vec::vector(%d)) <#> ?::vector(%d) LIMIT 5" % (svc.embedder.dim, svc.embedder.dim),
        ("[" + ",".join(["0.1"] * svc.embedder.dim) + "]",)))
    assert "records_embedding_ivf" in plan
    response = svc.search(agent_id="assistant", user_id="alice", query="jazz in Porto")
    dense = next(s for s in response.trace.stages if s.name == "dense")
    assert dense.outputs["index"]["method"] == "approximate" and dense.outputs["index"]["index"] == "records_embedding_ivf"
    assert [r.record_id for r in response.results][:3] == exact[:3]


def test_a_filter_admitting_few_rows_is_scanned_exactly_even_with_the_index(pg_service):
    svc = pg_service(ann_min_records=40, exact_max_rows=100)
    _fill(svc, 60)
    svc.index._maybe_build_ann(wait=True)
    assert svc.index.has_ann()
    response = svc.search(agent_id="assistant", user_id="alice", query="jazz in Porto")
    how = next(s for s in response.trace.stages if s.name == "dense").outputs["index"]
    assert how["method"] == "exact" and how["admitted"] == 60 and "at most 100" in how["reason"]


def test_the_dense_query_never_scores_an_unreadable_record(pg_service):
    svc = pg_service()
    _fill(svc, 10)
    b = svc.start_session(agent_id="assistant", user_id="bob")
    hidden = write(b, "Bob loves sushi and ramen more than anything.", attribute="food")
    response = svc.search(agent_id="assistant", user_id="alice", query="Bob loves sushi and ramen more than anything")
    ids = {c["id"] for s in response.trace.stages if isinstance(s.outputs, dict) for c in s.outputs.get("candidates", [])}
    assert ids and hidden not in ids


def test_the_hard_filter_is_sql_and_a_count_not_a_list_of_rows(pg_service):
    # the readable set is never read row by row: the filter carries its SQL and an exact count
    # (from record_counts, kept by triggers), which must equal counting the rows
    from memory_core.index.pg_vector import SqlFilter

    svc = pg_service()
    _fill(svc, 12)
    mask = svc.index.mask(["user:alice"], ("provisional", "confirmed"))
    assert isinstance(mask, SqlFilter)
    assert mask.sum() == svc.store.scalar("SELECT count(*) FROM records WHERE scope_id = 'alice' "
                                          "AND status IN ('provisional', 'confirmed') AND embedding_vec IS NOT NULL") > 0
    assert svc.index.mask(["user:bob"], ("confirmed",)).sum() == 0


def test_the_lifecycle_probe_difference_is_sql(pg_service):
    # the probe searches the rows a wider filter adds to the search's own: expressed as SQL, so it
    # costs the same at 1M readable rows as at 10 (it once listed every live row as a parameter)
    svc = pg_service()
    _fill(svc, 12)
    oldest = svc.store.scalar("SELECT min(seq) FROM records")
    svc.store.conn.execute_native("UPDATE records SET status = 'superseded' WHERE seq = %s", (oldest,))
    live = svc.index.mask(["user:alice"], ("provisional", "confirmed"))
    wide = svc.index.mask(["user:alice"], ("provisional", "confirmed", "superseded", "expired"))
    added = wide.without(live)
    assert added.sum() == 1
    hits = svc.index.search(svc.embedder.embed(["sushi"])[0], 5, added)
    assert [seq for seq, _ in hits] == [oldest]


def _counts(store) -> dict:
    return {tuple(r[:4]): r[4] for r in store.query("SELECT scope_kind, scope_id, status, type, n FROM record_counts WHERE n <> 0")}


def _recounted(store) -> dict:
    return {tuple(r[:4]): r[4] for r in store.query(
        "SELECT scope_kind, scope_id, status, type, count(*) FROM records WHERE embedding_vec IS NOT NULL GROUP BY 1, 2, 3, 4")}


def test_record_counts_follow_every_change_to_records(pg_service):
    # the hard filter's count comes from record_counts: it must equal counting the rows after
    # inserts, status changes, a vector removed, a multi-row update, a delete and a rolled-back change
    svc = pg_service()
    _fill(svc, 9)
    assert _counts(svc.store) == _recounted(svc.store) and sum(_counts(svc.store).values()) == 9
    first, second = (int(r[0]) for r in svc.store.query("SELECT seq FROM records ORDER BY seq LIMIT 2"))
    conn = svc.store.conn
    conn.execute_native("UPDATE records SET status = 'superseded' WHERE seq = %s", (first,))
    conn.execute_native("UPDATE records SET embedding_vec = NULL WHERE seq = %s", (second,))
    conn.execute_native("UPDATE records SET observations = observations + 1")  # touches every row, changes no count
    conn.execute_native("UPDATE records SET scope_id = 'bob' WHERE seq IN (SELECT seq FROM records ORDER BY seq DESC LIMIT 3)")
    assert _counts(svc.store) == _recounted(svc.store)
    conn.execute_native("BEGIN")
    conn.execute_native("UPDATE records SET status = 'expired'")
    conn.execute_native("ROLLBACK")
    assert _counts(svc.store) == _recounted(svc.store)
    conn.execute_native("DELETE FROM record_entities")
    conn.execute_native("DELETE FROM records_fts")
    conn.execute_native("DELETE FROM records WHERE seq = %s", (first,))
    assert _counts(svc.store) == _recounted(svc.store)
    # what the hard filter reports is that count
    assert svc.index.mask(["user:alice"], ("confirmed", "provisional")).sum() == svc.store.scalar(
        "SELECT count(*) FROM records WHERE scope_id = 'alice' AND status IN ('confirmed', 'provisional') AND embedding_vec IS NOT NULL")


def test_the_ivf_build_sets_the_memory_pgvector_needs(pg_service):
    # pgvector refuses an IVF build whose k-means sample exceeds maintenance_work_mem (64 MB by
    # default, less than 1,000 lists need): the backend's build sets its own. A database default of
    # 1 MB here makes the build fail without that.
    from memory_core.index.pg_vector import ivf_build_memory_mb

    svc = pg_service(ann_min_records=40)
    name = svc.store.scalar("SELECT current_database()")
    svc.store.conn.execute_native(f"ALTER DATABASE {name} SET maintenance_work_mem = '1MB'")
    _fill(svc, 150)  # enough table pages for pgvector to sample more than 1 MB of vectors
    svc.index._maybe_build_ann(wait=True)
    assert svc.index.has_ann()
    assert ivf_build_memory_mb(1000, 384) > 80


def test_the_hnsw_option_builds_a_graph_that_serves_the_same_top_results(pg_service):
    svc = pg_service(ann_min_records=40, exact_max_rows=0, ann_index="hnsw", hnsw_ef_search=40)
    _fill(svc, 60)
    bob = svc.start_session(agent_id="assistant", user_id="bob")
    for i in range(20):  # bob's notes on the same topics: in the graph, never in alice's answers
        write(bob, f"Bob's note {i}: jazz in Porto, {TOPICS[i % 10]} on day {i}.", attribute=f"b{i}")
    exact = [r.record_id for r in svc.search(agent_id="assistant", user_id="alice", query="jazz in Porto").results]
    svc.index._maybe_build_ann(wait=True)
    assert svc.index.has_ann()
    assert svc.store.scalar("SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'records_embedding_ivf'") == "hnsw"
    alice_ids = {row[0] for row in svc.store.query("SELECT id FROM records WHERE scope_id = 'alice'")}
    assert svc.store.scalar("SELECT count(*) FROM records WHERE scope_id = 'bob'") == 20
    svc.store.conn.execute_native("SET enable_seqscan = off")
    response = svc.search(agent_id="assistant", user_id="alice", query="jazz in Porto")
    dense = next(s for s in response.trace.stages if s.name == "dense")
    assert dense.outputs["index"]["engine"] == "pgvector (hnsw)" and dense.outputs["index"]["ef_search"] == 40
    assert [r.record_id for r in response.results][:3] == exact[:3]
    # bob's records are never returned to alice's agent, whichever index proposes them
    assert response.results and all(r.record.scope == "user:alice" for r in response.results)
    assert all(c["id"] in alice_ids for c in dense.outputs["candidates"])


def test_changing_the_index_kind_replaces_the_index(pg_service, new_target):
    svc = pg_service(ann_min_records=40, exact_max_rows=0)
    _fill(svc, 60)
    svc.index._maybe_build_ann(wait=True)
    assert svc.index.has_ann()
    url = svc.store.url
    svc.close()
    settings = default_settings(postgres={"ann_min_records": 40, "exact_max_rows": 0, "ann_index": "hnsw"},
                                retrieval={"lexical_max_df_share": 1.0})
    with MemoryService.open(url, settings, clock=svc.clock, embedder=HashingEmbedder()) as again:
        assert not again.index.has_ann()  # an IVF index is not the HNSW graph asked for: searches stay exact meanwhile
        response = again.search(agent_id="assistant", user_id="alice", query="jazz in Porto")
        assert next(s for s in response.trace.stages if s.name == "dense").outputs["index"]["method"] == "exact"
        again.index._maybe_build_ann(wait=True)
        assert again.index.has_ann()
        assert again.store.scalar("SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'records_embedding_ivf'") == "hnsw"


def test_an_unknown_index_kind_is_refused():
    with pytest.raises(Exception):
        default_settings(postgres={"ann_index": "annoy"})
