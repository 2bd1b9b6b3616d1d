"""Two processes opening one session at once record one prefix, and both serve it."""

from __future__ import annotations

import multiprocessing as mp

from memory_core import FixedClock, MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder

NOW = "2026-03-05T10:00:00Z"


def _open(path: str, ready, go, out) -> None:
    from memory_core.adapters.base import MemoryRuntime
    from memory_core.adapters.identity import Identity

    service = MemoryService.open(path, default_settings(), clock=FixedClock(NOW), embedder=HashingEmbedder())
    runtime = MemoryRuntime(service, framework="testhost", ambient=True)
    ready.wait()
    go.wait()
    session = runtime.open(Identity(agent_id="assistant", user_id="alice", session_id="shared"))
    out.put(runtime.prefix(session))
    service.close()


def test_concurrent_openers_agree_on_one_recorded_prefix(tmp_path):
    path = str(tmp_path / "m.sqlite")
    with MemoryService.open(path, default_settings(), clock=FixedClock(NOW), embedder=HashingEmbedder()) as service:
        service.grant("assistant", "user:alice", read=True, write=True, actor="test")
        writer = service.start_session(agent_id="assistant", user_id="alice", session_id="w")
        for words, content, attribute in (("Please answer me in French.", "The user wants answers in French.", "language"),
                                          ("Use metric units with me.", "The user wants metric units.", "units")):
            writer.record_turn("user", words)
            assert writer.call_tool("memory_write", {"type": "semantic", "content": content, "attribute": attribute,
                                                     "source_kind": "user_statement", "evidence": words})["ok"]
    ctx = mp.get_context("spawn")
    ready, go, out = ctx.Barrier(5), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_open, args=(path, ready, go, out)) for _ in range(4)]
    for p in procs:
        p.start()
    ready.wait()
    go.set()
    prefixes = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert len(set(prefixes)) == 1 and "metric units" in prefixes[0]
    with MemoryService.open(path, default_settings(), clock=FixedClock(NOW), embedder=HashingEmbedder()) as service:
        assert service.store.scalar("SELECT COUNT(*) FROM session_context WHERE session_id = 'shared'") == 1
        assert service.store.scalar("SELECT COUNT(*) FROM sessions WHERE id = 'shared'") == 1
