"""The search log: one row per search, no record text, and responses rebuilt from it."""

import json

import pytest

from memory_core.errors import NotFoundError
from memory_core.retrieve import list_searches, load_search
from memory_core.retrieve.search_log import decode_row
from memory_core.store.db import loads

from .helpers import search, write


def _row(service, search_id):
    return dict(service.store.query_one("SELECT * FROM search_log WHERE id = ?", (search_id,)))


def test_one_row_per_search_with_everything_but_record_text(service, alice):
    alice.record_turn("user", "My locker code is 4471-ZEBRA, remember it.")
    record_id = write(alice, "The user's locker code is 4471-ZEBRA.", attribute="locker_code",
                      source_kind="user_statement", evidence="My locker code is 4471-ZEBRA")
    before = service.store.scalar("SELECT COUNT(*) FROM search_log")
    response = search(service, alice, "locker code", session_id=alice.id)
    assert service.store.scalar("SELECT COUNT(*) FROM search_log") == before + 1
    raw = _row(service, response.search_id)
    assert isinstance(raw["trace"], bytes)  # compressed: decoded below, and the text checked there
    row = decode_row(service.store, raw)
    text = json.dumps(row)
    assert "ZEBRA" not in text and "4471" not in text
    assert row["raw_query"] == "locker code" and row["agent_id"] == "assistant" and row["session_id"] == alice.id
    assert row["result_ids"] == [record_id]
    stages = row["stages"]
    assert set(stages) == {s.name for s in response.trace.stages} and "log_write" in stages
    assert row["total_ms"] == response.total_ms
    trace = row["trace"]
    assert trace["generators"]["dense"][0] == {"id": record_id, "rank": 1, "score": pytest.approx(response.results[0].explanation.cosine, abs=1e-6)}
    request = row["request"]
    assert "settings" not in loads(raw["request"]) and request["settings_id"]  # the settings are stored once
    assert request["settings"]["cosine_floor"] == service.settings.retrieval.cosine_floor
    assert request["embedder"]["model"] == "test/hashing-embedder"
    assert set(row["scopes"]["readable"]) == {"agent:assistant/alice", "user:alice"}


@pytest.mark.parametrize("query", ["locker code", "quantum chromodynamics", "locker"])
def test_a_logged_search_rebuilds_the_same_response(service, alice, query):
    write(alice, "The user's locker code is 4471-ZEBRA.", attribute="locker_code")
    write(alice, "The user keeps a spare locker key at home.", attribute="locker_key")
    response = search(service, alice, query)
    rebuilt = load_search(service.store, response.search_id)
    assert rebuilt.from_log
    assert rebuilt.to_dict(include_records=False) == response.to_dict(include_records=False)
    assert [r.content for r in rebuilt.results] == [r.content for r in response.results]
    assert [r.record.id for r in rebuilt.results] == response.record_ids


def test_a_truncated_result_is_rebuilt_truncated(make_service):
    service = make_service(token_budget=50, token_overhead_per_result=10)
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    alice = service.start_session(agent_id="assistant", user_id="alice")
    write(alice, "Trip itinerary: " + " ".join(f"stop{i} museum" for i in range(100)), type="episodic")
    response = search(service, alice, "trip itinerary museum")
    rebuilt = load_search(service.store, response.search_id)
    assert rebuilt.results[0].content == response.results[0].content and response.results[0].explanation.truncated


def test_forgetting_a_record_leaves_no_text_and_the_rebuilt_result_shows_it_deleted(service, alice):
    record_id = write(alice, "The user's locker code is 4471-ZEBRA.", attribute="locker_code")
    response = search(service, alice, "locker code")
    alice.call_tool("memory_forget", {"record_id": record_id, "reason": "user asked"})
    rebuilt = load_search(service.store, response.search_id)
    assert rebuilt.results[0].record.status == "deleted" and rebuilt.results[0].content is None
    assert rebuilt.results[0].explanation.record_id == record_id
    dump = [decode_row(service.store, r) for r in service.store.query("SELECT * FROM search_log")]
    assert "ZEBRA" not in json.dumps(dump)


def test_replay_runs_the_logged_request_again_and_is_logged_as_a_replay(service, alice):
    first = write(alice, "The user lives in Porto.", attribute="home_city")
    original = search(service, alice, "where does the user live Porto", limit=3)
    assert original.record_ids == [first]
    again = service.retriever.replay(original.search_id)
    assert again.search_id != original.search_id and again.request.replay_of == original.search_id
    assert again.record_ids == original.record_ids and again.request.limit == 3
    write(alice, "The user lives in Lisbon now.", attribute="home_city")
    changed = service.replay_search(original.search_id)
    assert first not in changed.record_ids
    logged = list_searches(service.store, agent_id="assistant")
    assert [s["id"] for s in logged[:3]] == [changed.search_id, again.search_id, original.search_id]
    assert service.load_search(again.search_id).request.replay_of == original.search_id


def test_an_unknown_search_id_is_not_found(service):
    with pytest.raises(NotFoundError):
        load_search(service.store, "srch_missing")


class _FailingEmbedder:
    model_name, model_version, dim = "failing", "1", 64

    def embed(self, texts):
        raise RuntimeError("model crashed")


def test_a_search_that_raises_still_leaves_its_row(service, alice):
    retriever = service.retriever
    retriever.embedder = _FailingEmbedder()
    with pytest.raises(RuntimeError):
        search(service, alice, "anything at all")
    row = service.store.query_one("SELECT * FROM search_log ORDER BY seq DESC LIMIT 1")
    assert row["empty_reason"] == "search failed: RuntimeError: model crashed"
    stages = loads(row["trace"])["stages"]
    # The query is embedded on a worker thread; its failure surfaces where the vector is awaited
    # (dense), and the query_embedding stage's trace says it failed and why.
    assert stages[-1]["name"] == "dense"
    embedding = next(s for s in stages if s["name"] == "query_embedding")
    assert embedding["status"] == "failed" and "model crashed" in embedding["notes"][-1]
    assert row["trace"].startswith(b"L4")  # LZ4-compressed JSON (zlib, "Z1", before issue 16's follow-up)
    rebuilt = load_search(service.store, row["id"])
    assert rebuilt.empty and rebuilt.explanation is None and rebuilt.to_dict()["empty_reason"].startswith("search failed")


@pytest.mark.sqlite_only
def test_the_row_is_written_once_small_and_still_rebuilds_every_stage(service, alice):
    for i in range(40):
        write(alice, f"The user visited museum number {i} in Lisbon on a rainy day.", type="episodic", event_at="2026-02-01")
    writes_before = service.store.conn.total_changes
    response = search(service, alice, "museum Lisbon rainy day", limit=5)
    # one INSERT into search_log (and one INSERT OR IGNORE of the settings): no later UPDATE
    assert service.store.conn.total_changes - writes_before <= 2
    raw = _row(service, response.search_id)
    size = sum(len(v) if isinstance(v, (str, bytes)) else 8 for v in raw.values())
    assert size < 8000, size
    rebuilt = load_search(service.store, response.search_id)
    assert rebuilt.to_dict(include_records=False) == response.to_dict(include_records=False)
    assert [s.name for s in rebuilt.trace.stages] == [s.name for s in response.trace.stages]
    assert rebuilt.trace.stage("log_write").ms == response.trace.stage("log_write").ms
