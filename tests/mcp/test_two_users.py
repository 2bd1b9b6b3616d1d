"""Two users' MCP clients interleaved against one HTTP server leak nothing to each other (the
differential test of issue 12, extended to the MCP surface).

Two real servers run on two stores that differ only in bob's records: on one, bob's client writes
and searches interleaved with alice's on the same server; on the other, alice is alone. Everything
alice's client gets (results, explanations, error texts for bob's record ids) and every search-log
row her searches leave must be the same on both, once record ids are mapped to their contents and
times and durations are left out. Timing is not compared (no wall-time assertions in tests), and
neither is how the query's vector was obtained (the process's query-vector cache is shared by every
session, so a query another user just made is served from it: a timing channel about queries, not
records, documented in docs/mcp.md).
"""

import re

import pytest

from memory_core.mcp.memory_session import SESSION_META_KEY
from tests.mcp.servers import ServerProcess, http_client, new_key, open_service, prepare, run_async
from tests.property.test_scope_differential import _first_difference

pytestmark = pytest.mark.model

ALICE_NOTES = ["My divorce lawyer is called Ines.", "The garden needs tulips in March.", "I drink jasmine tea at night.",
               "The Atlas release checklist lives in the wiki.", "My dentist appointment is on Friday."]
BOB_NOTES = [f"Bob's divorce paperwork step {i} is with the lawyer." for i in range(6)] + [
    "Bob drinks jasmine tea too.", "Bob's dentist is Dr Priya.", "The Atlas release is Bob's job.", "Bob plants tulips."]
QUERIES = ["divorce lawyer", "what tea do I drink", "dentist", "Atlas release checklist", "tulips", "Priya"]
_ID = re.compile(r"\b(?:mem|ent|srch|ses|run)_[0-9a-f]{16}\b")
_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")
_TIMINGS = {"ms", "total_ms", "search_id", "index_changes_applied", "embedding_ms", "waited_ms", "at"}


def _plain(value, contents: dict[str, str]):
    if isinstance(value, dict):
        return {k: _plain(v, contents) for k, v in value.items() if k not in _TIMINGS}
    if isinstance(value, (list, tuple)):
        return [_plain(v, contents) for v in value]
    if isinstance(value, str):
        return _TS.sub("<time>", _ID.sub(lambda m: f"<{contents.get(m.group(0), 'id')}>", value))
    return value


def _run(url: str, alice_token: str, bob_token: str | None, bob_ids: list[str]) -> dict:
    """Alice's notes (with bob's interleaved when he has a token), then alice's searches and probes."""
    seen: dict = {"results": [], "probes": []}

    async def both():
        async with http_client(url, alice_token) as alice:
            async def notes_and_searches(bob=None):
                for i, note in enumerate(ALICE_NOTES):
                    r = await alice.call_tool("memory_write", {"type": "semantic", "content": note, "attribute": f"note_{i}"})
                    assert not r.is_error, r
                    seen["session"] = r.meta[SESSION_META_KEY]
                    if bob is not None:
                        for note_b in BOB_NOTES[2 * i: 2 * i + 2]:
                            b = await bob.call_tool("memory_write", {"type": "semantic", "content": note_b})
                            assert not b.is_error, b
                            seen.setdefault("bob_ids", []).append(b.structured_content["record_id"])
                        await bob.call_tool("memory_search", {"query": QUERIES[i % len(QUERIES)]})
                for query in QUERIES:
                    r = await alice.call_tool("memory_search", {"query": query})
                    seen["results"].append(r.structured_content)
                for rid in bob_ids or ["mem_0123456789abcdef"]:
                    for name, args in (("memory_get", {"record_id": rid}),
                                       ("memory_forget", {"record_id": rid, "reason": "mine now"}),
                                       ("memory_revise", {"action": "update", "record_id": rid, "content": "Changed.",
                                                          "reason": "x"})):
                        r = await alice.call_tool(name, args)
                        seen["probes"].append((name, r.is_error, r.content[0].text))

            if bob_token is None:
                await notes_and_searches()
            else:
                async with http_client(url, bob_token) as bob:
                    await notes_and_searches(bob)

    run_async(both)
    return seen


def _logged(target, session_id: str) -> list:
    """The trace of each search the session logged, as its stages' inputs, outputs and drops."""
    with open_service(target) as service:
        contents = {r["id"]: r["content"] for r in service.store.query("SELECT id, content FROM records")}
        ids = [r["id"] for r in service.store.query("SELECT id FROM search_log WHERE session_id = ? ORDER BY seq", (session_id,))]
        out = []
        for search_id in ids:
            response = service.load_search(search_id)
            out.append([_plain({"name": s.name, "status": s.status, "inputs": s.inputs,
                                "outputs": {k: v for k, v in s.outputs.items()
                                            if s.name != "query_embedding" or k in ("model", "version", "dim", "runtime")},
                                "dropped": s.dropped, "notes": [] if s.name == "query_embedding" else s.notes}, contents)
                        for s in response.trace.stages if s.name != "log_write"])
        return out, contents


def test_interleaved_users_learn_nothing_of_each_other(tmp_path):
    alone, crowded = tmp_path / "alone.sqlite", tmp_path / "crowded.sqlite"
    for target in (alone, crowded):
        prepare(target)
    _, alice_alone = new_key(alone, "assistant", "alice")
    _, alice_crowded = new_key(crowded, "assistant", "alice")
    _, bob_crowded = new_key(crowded, "other", "bob")
    with ServerProcess(crowded) as server:
        crowd = _run(server.url, alice_crowded, bob_crowded, [])
        bob_ids = crowd["bob_ids"]
        probes_crowded = _run(server.url, alice_crowded, None, bob_ids)["probes"]  # bob's real ids, from alice
    with ServerProcess(alone) as server:
        solo = _run(server.url, alice_alone, None, bob_ids)  # the same id strings: here no such records exist

    log_alone, contents_alone = _logged(alone, solo["session"])
    log_crowded, contents_crowded = _logged(crowded, crowd["session"])
    results_alone = _plain(solo["results"], contents_alone)
    results_crowded = _plain(crowd["results"], contents_crowded)
    assert any(r["results"] for r in results_alone)  # the comparison is about something
    assert results_alone == results_crowded, _first_difference(results_alone, results_crowded)
    assert log_alone == log_crowded, _first_difference(log_alone, log_crowded)
    assert solo["probes"] == probes_crowded, _first_difference(solo["probes"], probes_crowded)
    assert all(is_error for _, is_error, _ in probes_crowded)
    with open_service(crowded) as service:  # and bob's records are all still there, unchanged
        assert {service.record(rid).content for rid in bob_ids} == set(BOB_NOTES)
