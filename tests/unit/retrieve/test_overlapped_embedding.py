"""The query embedded on a worker thread while lexical and entity search run
(``retrieval.overlap_query_embedding``): same answers as embedding in line, an honest trace, and no
hang or mix-up with many threads, after close, or in a forked child."""

import multiprocessing
import threading

import pytest

from memory_core.settings import default_settings

from .helpers import write

QUERIES = [
    "concise answers", "What does Alice think of the Atlas project?", "penicillin allergy", "meeting on Friday",
    "something never stored anywhere", "café Zürich ☕", "   x  ",
]


def _seed(session):
    write(session, "The user prefers concise technical answers.", attribute="answer_style")
    write(session, "Alice is allergic to penicillin.", attribute="allergy")
    write(session, "The Atlas project review moved to Friday.", type="episodic")
    write(session, "Alice met Priya at the café in Zürich.", type="episodic")


def _answer(response):
    return ([(r.record_id, round(r.explanation.fused_score or 0.0, 9), r.explanation.gate) for r in response.results],
            response.empty_reason)


def _retrieval(**changes):
    return default_settings(retrieval=changes).retrieval


def search(service, session, query, settings=None):
    """A search with these retrieval settings (the defaults when None), as the service runs it."""
    return service.retriever.search(agent_id=session.agent_id, user_id=session.user_id, query=query,
                                    settings=settings or service.settings.retrieval)


def test_overlapped_and_in_line_embedding_give_the_same_answers(service, alice):
    _seed(alice)
    for query in QUERIES:
        overlapped = search(service, alice, query, settings=_retrieval(overlap_query_embedding=True, query_cache_size=0))
        in_line = search(service, alice, query, settings=_retrieval(overlap_query_embedding=False, query_cache_size=0))
        assert _answer(overlapped) == _answer(in_line), query


def test_the_trace_says_where_the_embedding_ran_and_how_long_dense_waited(service, alice):
    _seed(alice)
    response = search(service, alice, "concise answers", settings=_retrieval(query_cache_size=0))
    names = [s.name for s in response.trace.stages]
    assert names.index("query_embedding") < names.index("lexical") < names.index("entity") < names.index("dense")
    embedding = response.trace.stage("query_embedding")
    assert embedding.outputs["cache"] == "miss" and embedding.outputs["mode"].startswith("overlapped")
    assert embedding.outputs["waited_in"] == "dense"
    assert embedding.outputs["embedding_ms"] >= 0 and 0 <= embedding.outputs["waited_ms"] <= response.trace.stage("dense").ms
    assert "worker thread" in embedding.notes[-1]
    work = response.trace.work_timings()
    keys = list(work)
    assert keys.index("vector_wait") == keys.index("dense") - 1
    assert work["query_embedding"] == embedding.outputs["embedding_ms"]
    assert work["dense"] == pytest.approx(max(response.trace.stage("dense").ms - embedding.outputs["waited_ms"], 0.0), abs=1e-3)


def test_a_cached_query_vector_is_used_at_once_and_in_line_mode_is_unchanged(service, alice):
    _seed(alice)
    search(service, alice, "penicillin allergy")
    again = search(service, alice, "penicillin allergy")
    embedding = again.trace.stage("query_embedding")
    assert embedding.outputs["cache"] == "hit" and "waited_ms" not in embedding.outputs
    assert "vector_wait" not in again.trace.work_timings()
    in_line = search(service, alice, "meeting on Friday", settings=_retrieval(overlap_query_embedding=False))
    assert in_line.trace.stage("query_embedding").outputs["mode"] == "in line"
    assert in_line.trace.work_timings() == in_line.trace.timings()


def test_many_threads_searching_at_once_each_get_their_own_answer(service, alice):
    _seed(alice)
    settings = _retrieval(query_cache_size=0)
    expected = {q: _answer(search(service, alice, q, settings=_retrieval(overlap_query_embedding=False, query_cache_size=0)))
                for q in QUERIES}
    got: dict[tuple[int, str], tuple] = {}
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(12):
                query = QUERIES[(n + i) % len(QUERIES)]
                got[(n, i)] = (query, _answer(search(service, alice, query, settings=settings)))
        except BaseException as exc:  # reported below, with the thread's answer missing
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors and len(got) == 8 * 12
    for query, answer in got.values():
        assert answer == expected[query], query


def test_searching_after_close_starts_the_workers_again(service, alice):
    _seed(alice)
    before = _answer(search(service, alice, "concise answers", settings=_retrieval(query_cache_size=0)))
    service.retriever.close()
    assert _answer(search(service, alice, "concise answers", settings=_retrieval(query_cache_size=0))) == before


def _embed_in_child(retriever, out) -> None:
    vector, _ = retriever.query_vector_in_background("forked", _retrieval(query_cache_size=0)).result(timeout=20)
    out.put(int(vector.shape[0]))


def test_a_forked_child_gets_its_own_workers_instead_of_hanging(service, alice):
    search(service, alice, "start the workers in the parent", settings=_retrieval(query_cache_size=0))
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    child = context.Process(target=_embed_in_child, args=(service.retriever, out))
    child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child hung waiting for a worker thread that does not exist in it")
    assert child.exitcode == 0 and out.get(timeout=5) == service.embedder.dim


def test_an_embedding_failure_leaves_a_structured_tool_error(service, alice):
    class Broken:
        model_name, model_version, dim = "broken", "1", 64

        def embed(self, texts):
            raise RuntimeError("model crashed")

    _seed(alice)
    service.retriever.embedder = Broken()
    result = alice.call_tool("memory_search", {"query": "concise answers"})
    assert result["ok"] is False and result["error"]["code"]
