"""MemoryService.write_many: the rules of a single write, one embedding call and one transaction per batch."""

import re

import pytest

from memory_core import MemoryService
from memory_core.errors import MemoryCoreError
from memory_core.ingest.write_types import WriteRequest
from memory_core.policy.scopes import Scope
from tests.fakes import HashingEmbedder


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting its calls and the texts of each."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def embed(self, texts):
        self.calls.append(len(texts))
        return super().embed(texts)


def _req(content, *, attribute=None, scope="user:alice", source_kind="agent_inference", type="semantic", about=None, **more):
    kind, _, ident = scope.partition(":")
    return WriteRequest(type=type, content=content, scope=Scope(kind, ident), source_kind=source_kind, agent_id="assistant",
                        user_id="alice", actor="test", attribute=attribute, about=about, **more)


def _requests():
    """A mix that exercises every rule: create, repeat (reinforce), newer claim (supersede), a claim of
    lower rank (conflict), refusals before and inside the transaction, entities by name."""
    return [
        _req("The user lives in Lisbon.", attribute="home_city"),
        _req("The user drinks green tea.", attribute="drink"),
        _req("The user drinks green tea.", attribute="drink"),  # same claim: reinforces the one above
        _req("The user lives in Porto.", attribute="home_city"),  # same rank, other claim: supersedes Lisbon
        _req("", attribute="x"),  # refused by input validation
        _req("Team notes are kept in the wiki.", scope="project:apollo", about="Apollo", attribute="notes"),  # no grant
        _req("The project ships in May.", scope="user:bob", about="Apollo", attribute="ship"),  # no grant on bob
        _req("Deploys happen on Fridays.", type="procedural", attribute=None),  # refused: a procedure needs a name
        _req("Met Dana at the conference.", type="episodic", mentions=["Dana"]),
        _req("Dana works at Initech.", about="Dana", about_kind="person", attribute="employer"),
    ]


def _shape(results, ids):
    """Outcomes with record ids replaced by the position that created them (comparable across stores)."""
    def norm(text):
        return re.sub(r"mem_[0-9a-z]+", lambda m: f"#{ids.get(m.group(0), '?')}", text)
    out = []
    for position, result in enumerate(results):
        if result.get("ok") is False:
            out.append(("refused", result["error"]["code"]))
            continue
        ids.setdefault(result["record_id"], position)
        out.append((result["outcome"], norm(result["summary"]), result["status"], result["source_kind"]))
    return out


def test_write_many_gives_the_outcomes_of_single_writes_in_order(make_target, clock, settings):
    single = MemoryService.open(make_target("single.sqlite"), settings, clock=clock, embedder=HashingEmbedder())
    bulk = MemoryService.open(make_target("bulk.sqlite"), settings, clock=clock, embedder=HashingEmbedder())
    try:
        for svc in (single, bulk):
            svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
        access = single.access("assistant", "alice")
        one_by_one = []
        for req in _requests():
            try:
                one_by_one.append(single.write(req, access).to_tool_result())
            except MemoryCoreError as exc:
                one_by_one.append({"ok": False, "error": exc.to_dict()})
        many = [r.to_dict() for r in bulk.write_many(_requests(), bulk.access("assistant", "alice"))]
        assert _shape(many, {}) == _shape(one_by_one, {})
        assert [r["position"] for r in many] == list(range(len(_requests())))
        count = "SELECT COUNT(*) FROM {} "
        for table in ("records", "entities", "record_entities", "events", "write_log"):
            assert bulk.store.scalar(count.format(table)) == single.store.scalar(count.format(table)), table
        statuses = "SELECT status, COUNT(*) FROM records GROUP BY status ORDER BY status"
        assert [tuple(r) for r in bulk.store.query(statuses)] == [tuple(r) for r in single.store.query(statuses)]
    finally:
        single.close()
        bulk.close()


def test_one_embedding_call_and_one_transaction_per_batch(store_target, clock, settings):
    embedder = CountingEmbedder()
    svc = MemoryService.open(store_target, settings, clock=clock, embedder=embedder)
    try:
        svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
        embedder.calls.clear()
        requests = [_req(f"The user owns {n} plants of kind {n * 7}.", attribute=f"plants_{n}") for n in range(25)]
        results = svc.write_many(requests, svc.access("assistant", "alice"), batch_size=10)
        assert all(r.ok for r in results) and len(results) == 25
        assert embedder.calls == [10, 10, 5]
        assert svc.store.scalar("SELECT COUNT(*) FROM records") == 25
        found = svc.search(agent_id="assistant", user_id="alice", query="plants of kind 84")
        assert any("12 plants" in r.record.content for r in found.results)
    finally:
        svc.close()


def test_a_refusal_inside_the_transaction_undoes_only_that_request(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    service.grant("assistant", "project:apollo", read=True, write=True, actor="t")
    requests = [
        _req("The user likes jazz.", attribute="music"),
        _req("Apollo ships in May.", scope="project:apollo", attribute="ship"),  # refused at entity resolution: no 'about'
        _req("Apollo ships in June.", scope="project:apollo", about="Apollo", attribute="ship"),
    ]
    results = service.write_many(requests, service.access("assistant", "alice"))
    assert [r.ok for r in results] == [True, False, True]
    assert results[1].error.to_dict()["code"] == "invalid_input" and results[1].to_dict()["stage"] == "entity_link_resolution"
    contents = sorted(r["content"] for r in service.store.query("SELECT content FROM records"))
    assert contents == ["Apollo ships in June.", "The user likes jazz."]
    logged = [r["outcome"] for r in service.store.query("SELECT outcome FROM write_log ORDER BY seq")]
    assert logged == ["created", "refused", "created"]


def test_dry_run_reports_and_writes_nothing(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    before = {t: service.store.scalar(f"SELECT COUNT(*) FROM {t}") for t in ("records", "entities", "events", "write_log")}
    results = service.write_many(_requests(), service.access("assistant", "alice"), dry_run=True)
    assert [r.outcome.outcome for r in results if r.ok][:3] == ["created", "created", "reinforced"]
    assert results[3].outcome.superseded  # would supersede Lisbon
    assert {t: service.store.scalar(f"SELECT COUNT(*) FROM {t}") for t in before} == before
    assert service.write_many(_requests()[:1], service.access("assistant", "alice"))[0].outcome.outcome == "created"


def test_a_crash_mid_batch_leaves_nothing_of_that_batch(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    requests = [_req(f"The user has visited {n} countries in region {n}.", attribute=f"visited_{n}") for n in range(6)]

    def crash(done, total):
        if done == 5:
            raise RuntimeError("the process fails here")

    with pytest.raises(RuntimeError):
        service.write_many(requests, service.access("assistant", "alice"), batch_size=4, progress=crash)
    rows = service.store.query("SELECT content FROM records ORDER BY seq")
    assert [r["content"] for r in rows] == [r.content for r in requests[:4]]  # the first batch committed, the second none
    assert service.store.scalar("SELECT COUNT(*) FROM write_log") == 4
    assert service.index.count() == 4
