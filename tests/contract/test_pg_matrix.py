"""Dense search on PostgreSQL from the in-process matrix (``postgres.dense_search = "matrix"``,
memory_core/index/pg_matrix.py), on the real server: it returns what the exact SQL scan returns, for
many filters and principals; other processes' writes, revisions and forgets reach the next search;
and admission stays SQL's even when the matrix is stale."""

import multiprocessing as mp

import pytest

from memory_core import FixedClock, MemoryService
from memory_core.index.pg_matrix import PgMatrix
from memory_core.retrieve.filters import HardFilter, as_of_filter
from memory_core.settings import default_settings
from memory_core.store.as_of_queries import AS_OF_STATUSES
from memory_core.store.records import HISTORICAL_STATUSES, LIVE_STATUSES
from memory_core.store.search_queries import CANDIDATE_COLUMNS
from tests.contract import pg_matrix_workers
from tests.fakes import HashingEmbedder

NOW = "2026-03-05T10:00:00Z"
FAR = "2027-06-01T00:00:00Z"  # every provisional record written in the fill has lapsed by then
USERS = ("alice", "bob", "carol")
TOPICS = ["sushi", "ramen", "peanuts", "cycling", "jazz", "Lisbon", "Porto", "python", "chess", "tennis"]
QUERIES = ["jazz in Porto", "sushi and ramen", "chess with python"]


def _open(url: str, mode: str, clock: FixedClock) -> MemoryService:
    settings = default_settings(postgres={"dense_search": mode}, retrieval={"lexical_max_df_share": 1.0})
    return MemoryService.open(url, settings, clock=clock, embedder=HashingEmbedder())


def _write_day(svc: MemoryService, day: int) -> dict:
    ids = {}
    for user in USERS:
        session = svc.start_session(agent_id="assistant", user_id=user)
        for i in range(12):
            n = day * 12 + i
            args = {"type": "episodic" if n % 3 == 0 else "semantic",
                    "content": f"{user.title()} note {n}: {TOPICS[n % 10]} with {TOPICS[(n * 7) % 10]}, day {n}."}
            if args["type"] == "episodic":
                args["event_at"] = f"2026-0{1 + n % 3}-{10 + n % 15:02d}T09:00:00Z"
            else:
                args["attribute"] = f"n{n}"
            result = session.call_tool("memory_write", args)
            assert result["ok"], result
            ids[(user, n)] = result["record_id"]
            if n % 4 == 0:  # a person's confirmation: provisional -> confirmed
                svc.confirm(result["record_id"], actor="admin", reason="checked", promote=True)
    return ids


@pytest.fixture
def stores(new_target):
    """One database with every lifecycle state, opened twice: dense search by matrix and by SQL."""
    url = new_target("postgresql")
    clock = FixedClock(NOW)
    matrix, sql = _open(url, "matrix", clock), _open(url, "sql", clock)
    for user in USERS:
        matrix.grant("assistant", f"user:{user}", read=True, write=True, actor="t")
    matrix.grant("reader", "user:alice", read=True, actor="t")
    for user in ("alice", "bob"):
        matrix.grant("auditor", f"user:{user}", read=True, actor="t")
    ids = _write_day(matrix, 0)
    clock.advance(days=31)
    assert matrix.run_maintenance()  # day 0's provisional records expire
    instants = [clock.now().isoformat()]
    ids |= _write_day(matrix, 1)
    clock.advance(days=1)
    instants.append(clock.now().isoformat())
    ids |= _write_day(matrix, 2)
    alice = matrix.start_session(agent_id="assistant", user_id="alice")
    for n in (13, 16, 25):
        assert alice.call_tool("memory_revise", {"action": "update", "record_id": ids[("alice", n)], "reason": "corrected",
                                                 "content": f"Alice corrected note {n}: {TOPICS[n % 10]} after all."})["ok"]
    for n in (14, 26):
        assert alice.call_tool("memory_forget", {"record_id": ids[("alice", n)], "reason": "asked"})["ok"]
    statuses = {row[0] for row in matrix.store.query("SELECT DISTINCT status FROM records")}
    assert statuses == {"provisional", "confirmed", "superseded", "expired", "deleted"}
    yield matrix, sql, clock, instants
    matrix.close()
    sql.close()


def _filters(now: str):
    for scopes in [("user:alice",), ("user:alice", "user:bob"), ("user:bob", "user:carol"), tuple(f"user:{u}" for u in USERS),
                   ("user:nobody",)]:
        for statuses, include_lapsed in ((LIVE_STATUSES, False), (HISTORICAL_STATUSES, True)):
            for types in (None, ("episodic",)):
                for window in ((None, None), ("2026-02-01T00:00:00Z", "2026-02-28T23:59:59Z")):
                    for at in (now, FAR):
                        yield HardFilter(scopes=scopes, statuses=tuple(statuses), types=types, event_from=window[0],
                                         event_to=window[1], now=at, include_lapsed=include_lapsed)


def _as_of_filters(instants: list[str]):
    for scopes in [("user:alice",), ("user:bob", "user:carol")]:
        for mode in ("memory", "world"):
            for at in instants:
                yield HardFilter(scopes=scopes, statuses=AS_OF_STATUSES[mode], types=None, event_from=None, event_to=None,
                                 now=at, include_lapsed=mode == "memory", as_of=at, as_of_mode=mode)


def _dense(svc: MemoryService, flt: HardFilter, query: str, k: int):
    index = svc.index
    mask = index.filter_mask(flt.without_as_of())
    if flt.as_of:
        flt, mask, _ = as_of_filter(svc.store, index, flt, mask)
    hits, how, rows = index.search_with_rows(svc.embedder.embed([query])[0], k, mask, CANDIDATE_COLUMNS)
    for row in rows:  # whatever answered, every row returned passes the filter
        assert flt.admits(row) is None, (flt, dict(row))
    return [(seq, round(cosine, 5)) for seq, cosine in sorted(hits, key=lambda h: (-h[1], h[0]))], how


def _same_ranking(got: list, want: list) -> bool:
    """The same cosines, best first, and the same records above the last one: among records tied at
    the cut (the hashing embedder gives equal vectors to notes with the same words) either may be
    kept, as ``ORDER BY ... LIMIT`` itself keeps any of them."""
    if [c for _, c in got] != [c for _, c in want]:
        return False
    cut = got[-1][1] if got else None
    return {s for s, c in got if c != cut} == {s for s, c in want if c != cut}


def test_matrix_and_exact_sql_return_the_same_candidates_and_cosines(stores):
    matrix, sql, clock, instants = stores
    engines = {"matrix": 0, "empty": 0}
    filters = [*_filters(clock.now().isoformat()), *_as_of_filters(instants)]
    for flt in filters:
        for query in QUERIES:
            for k in (5, 40):
                got, how = _dense(matrix, flt, query, k)
                want, sql_how = _dense(sql, flt, query, k)
                assert _same_ranking(got, want), (flt, query, k, how, got, want)
                assert sql_how["engine"] == "pgvector"
                engines["matrix" if how["engine"] == "matrix" else "empty" if not want else how["engine"]] += 1
    # every search that had rows to rank was answered by the matrix (none fell back to SQL)
    assert set(engines) == {"matrix", "empty"} and engines["matrix"] > len(filters)


@pytest.mark.parametrize("principal", [("reader", "alice"), ("auditor", "bob"), ("reader", "bob"), ("assistant", "carol")])
def test_searches_of_principals_with_different_grants_agree(stores, principal):
    matrix, sql, clock, instants = stores
    agent, user = principal
    variants = [{}, {"historical": True}, {"types": ["episodic"]}, {"time_from": "2026-02-01", "time_to": "2026-03-31"},
                {"as_of": instants[0]}, {"as_of": instants[1], "as_of_mode": "world"}]
    for query in QUERIES:
        for extra in variants:
            a = matrix.search(agent_id=agent, user_id=user, query=query, **extra)
            b = sql.search(agent_id=agent, user_id=user, query=query, **extra)
            dense_a, dense_b = a.trace.stage("dense").outputs, b.trace.stage("dense").outputs
            got, want = ([(c["id"], c["cosine"]) for c in d["candidates"]] for d in (dense_a, dense_b))
            assert _same_ranking(got, want), (principal, query, extra)
            if got == want:  # (a tie at the cut may keep another record, which may then rank)
                assert [r.record_id for r in a.results] == [r.record_id for r in b.results]
            if dense_a["candidates"]:
                assert dense_a["index"]["engine"] == "matrix"


# -- other processes ---------------------------------------------------------------------------------


@pytest.fixture
def searcher(new_target):
    """A matrix-searching service with a few of alice's records, its matrix loaded by a first search."""
    url = new_target("postgresql")
    svc = _open(url, "matrix", FixedClock(NOW))
    svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
    alice = svc.start_session(agent_id="assistant", user_id="alice")
    for i, topic in enumerate(TOPICS):
        assert alice.call_tool("memory_write", {"type": "semantic", "content": f"The user talked about {topic} on day {i}.",
                                                "attribute": f"t{i}"})["ok"]
    assert _dense_of(svc, "The user talked about jazz")["index"]["engine"] == "matrix"
    assert svc.index.matrix is not None and svc.index.matrix.loaded
    yield svc, url
    svc.close()


def _dense_of(svc: MemoryService, query: str) -> dict:
    return svc.search(agent_id="assistant", user_id="alice", query=query).trace.stage("dense").outputs


def _in_another_process(url: str, action: str, record_id: str | None = None, content: str | None = None) -> None:
    proc = mp.get_context("spawn").Process(target=pg_matrix_workers.change, args=(url, action, record_id, content))
    proc.start()
    proc.join(300)
    assert proc.exitcode == 0


def _seq(svc: MemoryService, record_id: str) -> int:
    return int(svc.store.scalar("SELECT seq FROM records WHERE id = ?", (record_id,)))


def test_another_process_write_reaches_the_next_matrix_search(searcher):
    svc, url = searcher
    content = "The user owns a sailboat called Petrel."
    _in_another_process(url, "write", content=content)
    dense = _dense_of(svc, "sailboat called Petrel")
    new_id = svc.store.scalar("SELECT id FROM records WHERE content = ?", (content,))
    assert dense["index"]["engine"] == "matrix" and dense["index"]["changes_applied"] >= 1
    assert dense["candidates"][0]["id"] == new_id
    assert svc.index.matrix.holds(_seq(svc, new_id))


def test_another_process_revision_reaches_the_next_matrix_search(searcher):
    svc, url = searcher
    old = _dense_of(svc, "The user talked about jazz on day 4")["candidates"][0]["id"]
    _in_another_process(url, "revise", old, "The user talked about jazz and a sailboat on day 4.")
    dense = _dense_of(svc, "jazz and a sailboat on day 4")
    new_id = svc.store.scalar("SELECT superseded_by_id FROM records WHERE id = ?", (old,))
    ids = [c["id"] for c in dense["candidates"]]
    assert dense["index"]["engine"] == "matrix" and new_id and ids[0] == new_id and old not in ids


def _forgotten_is_gone(svc: MemoryService, record_id: str, seq: int, query: str) -> None:
    """The forgotten record is neither proposed nor returned, and its vector has left this process's matrix."""
    response = svc.search(agent_id="assistant", user_id="alice", query=query)
    dense = response.trace.stage("dense").outputs
    assert record_id not in {c["id"] for c in dense["candidates"]}
    assert record_id not in {r.record_id for r in response.results}
    assert dense["index"]["engine"] == "matrix"
    assert not svc.index.matrix.holds(seq), "the forgotten record's vector is still in this process's matrix"


def test_another_process_forget_never_comes_back_from_the_matrix(searcher):
    svc, url = searcher
    gone = _dense_of(svc, "The user talked about Lisbon on day 5")["candidates"][0]["id"]
    seq = _seq(svc, gone)
    assert svc.index.matrix.holds(seq)
    _in_another_process(url, "forget", gone)
    _forgotten_is_gone(svc, gone, seq, "The user talked about Lisbon on day 5")
    _forgotten_is_gone(svc, gone, seq, "The user talked about Lisbon on day 5")  # and on every later search


def test_without_the_change_feed_refresh_the_forget_check_fails_but_sql_still_refuses_the_row(searcher, monkeypatch):
    svc, url = searcher
    monkeypatch.setattr(PgMatrix, "_apply_feed", lambda self, rows: 0)  # no change-feed entry is ever applied
    gone = _dense_of(svc, "The user talked about Lisbon on day 5")["candidates"][0]["id"]
    seq = _seq(svc, gone)
    _in_another_process(url, "forget", gone)
    with pytest.raises(AssertionError, match="still in this process's matrix"):
        _forgotten_is_gone(svc, gone, seq, "The user talked about Lisbon on day 5")
    # the stale matrix still proposes the row; the filter's SQL refuses it, so it is never returned
    response = svc.search(agent_id="assistant", user_id="alice", query="The user talked about Lisbon on day 5")
    dense = response.trace.stage("dense").outputs
    assert dense["index"]["engine"] == "matrix" and dense["index"]["refused_by_sql"] >= 1
    assert gone not in {c["id"] for c in dense["candidates"]} | {r.record_id for r in response.results}


def test_a_search_inside_a_write_transaction_runs_in_sql(searcher):
    # the write path's duplicate search runs under the transaction's locks: only SQL sees the rows
    # committed before they were taken, and the transaction's own
    svc, _ = searcher
    query = svc.embedder.embed(["a brand new note about kites"])[0]
    with svc.store.transaction(["user:alice"]):
        mask = svc.index.mask(["user:alice"], LIVE_STATUSES)
        hits, how, _ = svc.index.search_with_rows(query, 3, mask)
    assert how["engine"] == "pgvector" and len(hits) == 3
    hits, how, _ = svc.index.search_with_rows(query, 3, svc.index.mask(["user:alice"], LIVE_STATUSES))
    assert how["engine"] == "matrix" and len(hits) == 3


def test_above_matrix_max_records_dense_search_stays_in_sql(new_target):
    svc = MemoryService.open(new_target("postgresql"), default_settings(postgres={"matrix_max_records": 5}),
                             clock=FixedClock(NOW), embedder=HashingEmbedder())
    try:
        svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
        alice = svc.start_session(agent_id="assistant", user_id="alice")
        for i, topic in enumerate(TOPICS):
            assert alice.call_tool("memory_write", {"type": "semantic", "content": f"Noted {topic} {i}.", "attribute": f"t{i}"})["ok"]
        assert _dense_of(svc, "Noted jazz")["index"]["engine"] == "pgvector" and svc.index.matrix is None
    finally:
        svc.close()


class RolledEmbedder(HashingEmbedder):
    """The hashing embedder's vectors rolled by one place: another model of the same dimension."""

    model_name = "test/rolled-hashing-embedder"

    def embed(self, texts):
        import numpy as np

        return np.roll(np.asarray(super().embed(texts)), 1, axis=1)


def test_a_reembed_by_another_connection_resets_the_matrix(searcher):
    # a re-embed rewrites every vector and marks the feed "reset": the next search reloads the matrix
    from memory_core.index.reembed import reembed_store

    svc, url = searcher
    other = MemoryService.open(url, default_settings(postgres={"dense_search": "sql"}), clock=FixedClock(NOW),
                               embedder=HashingEmbedder(), allow_embedder_mismatch=True)
    try:
        reembed_store(other.store, other.index, RolledEmbedder(), other.clock, actor="t")
    finally:
        other.close()
    query = RolledEmbedder().embed(["The user talked about chess on day 8"])[0]
    mask = svc.index.mask(["user:alice"], LIVE_STATUSES)
    hits, how, _ = svc.index.search_with_rows(query, 3, mask)
    assert how["engine"] == "matrix" and how["changes_applied"] >= 1
    top = hits[0][0]
    assert svc.store.scalar("SELECT content FROM records WHERE seq = ?", (top,)) == "The user talked about chess on day 8."
    stored = RolledEmbedder().embed(["The user talked about chess on day 8."])[0]
    assert abs(float(svc.index.matrix.vectors([top])[0] @ stored) - 1.0) < 1e-5  # the matrix holds the new vector
