"""Hostile writers against one store, with the real packaged MiniLM.

- Concurrent writers of distinct facts (threads in this process and separate processes) lose
  none: every acknowledged write stores its own text (issue 11 saw 285 of 400 folded away).
- A writer killed with SIGKILL mid-stream leaves no half-written record: every record has its
  FTS row, embedding, creation event and write-log row, and the file passes integrity_check.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchmarks.extraction_eval import build_embedder
from memory_core import FixedClock, MemoryService, load_settings

pytestmark = pytest.mark.model
ROOT = Path(__file__).resolve().parents[2]
PER_WRITER = 100


def code_word(writer: int, i: int) -> str:
    # Near-identical sentences: MiniLM puts every pair of them above the old 0.93 threshold.
    return f"Code word number {i} for team {writer} is zq{writer}x{i}q."


def _process_writer(path: str, writer: int, ready, go, out) -> None:
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"),
                                 embedder=build_embedder("packaged", load_settings()))
    session = service.start_session(agent_id="assistant", user_id="alice")
    ready.set()
    go.wait(300)
    results = [session.call_tool("memory_write", {"type": "semantic", "content": code_word(writer, i)}) for i in range(PER_WRITER)]
    out.put(results)
    service.close()


def test_concurrent_writers_of_distinct_facts_lose_none(tmp_path):
    path = tmp_path / "memory.sqlite"
    embedder = build_embedder("packaged", load_settings())
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=embedder)
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    ctx = mp.get_context("spawn")
    go, out = ctx.Event(), ctx.Queue()
    readies, procs = [], []
    for writer in (2, 3):
        ready = ctx.Event()
        proc = ctx.Process(target=_process_writer, args=(str(path), writer, ready, go, out))
        proc.start()
        readies.append(ready)
        procs.append(proc)
    assert all(r.wait(300) for r in readies)

    results: dict[int, list[dict]] = {}

    def thread_writer(writer: int) -> None:
        session = service.start_session(agent_id="assistant", user_id="alice")
        results[writer] = [session.call_tool("memory_write", {"type": "semantic", "content": code_word(writer, i)})
                           for i in range(PER_WRITER)]

    threads = [threading.Thread(target=thread_writer, args=(w,)) for w in (0, 1)]
    go.set()
    for thread in threads:
        thread.start()
    collected = [out.get(timeout=600) for _ in procs]
    for thread in threads:
        thread.join(600)
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    acknowledged = [r for batch in [*results.values(), *collected] for r in batch]
    assert len(acknowledged) == 4 * PER_WRITER
    assert all(r["ok"] for r in acknowledged), [r for r in acknowledged if not r["ok"]][:3]
    assert [r for r in acknowledged if r["outcome"] != "created"] == []
    stored = {row["content"] for row in service.store.query("SELECT content FROM records WHERE status = 'provisional'")}
    expected = {code_word(w, i) for w in range(4) for i in range(PER_WRITER)}
    assert expected <= stored, f"{len(expected - stored)} acknowledged facts have no text of their own"
    assert len({r["record_id"] for r in acknowledged}) == 4 * PER_WRITER
    service.close()


_KILLED_WRITER = """
import sys
from memory_core import FixedClock, MemoryService, load_settings
from tests.fakes import HashingEmbedder
service = MemoryService.open(sys.argv[1], load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
session = service.start_session(agent_id="assistant", user_id="alice")
session.record_turn("user", "I use Vim. My rent is $1,200.")
print("ready", flush=True)
i = 0
while True:
    i += 1
    kind = i % 3
    if kind == 0:
        args = {"type": "semantic", "content": f"The user's rent is ${1200 + i}.", "attribute": "rent"}
    elif kind == 1:
        args = {"type": "procedural", "content": f"How to rotate key {i}.", "procedure": {
            "name": f"rotate key {i % 7}", "trigger": "a key leaks", "steps": ["revoke it", f"issue key {i}"]}}
    else:
        args = {"type": "episodic", "content": f"Deploy number {i} went out with build \\u00e9\\u6771{i}."}
    result = session.call_tool("memory_write", args)
    assert result["ok"], result
    print(i, flush=True)  # the test kills the process after a given number of writes
"""


def _consistent(path: Path) -> None:
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=build_embedder("hashing", load_settings()))
    store = service.store
    assert store.scalar("PRAGMA integrity_check") == "ok"
    records = store.query("SELECT id, seq, type, status, embedding FROM records")
    fts = {row[0] for row in store.query("SELECT rowid FROM records_fts")}
    logged = {row[0] for row in store.query("SELECT record_id FROM write_log WHERE outcome = 'created'")}
    created = {row[0] for row in store.query("SELECT record_id FROM events WHERE kind = 'record.created'")}
    procedures = {row[0] for row in store.query("SELECT record_id FROM procedures")}
    for record in records:
        assert record["embedding"] is not None, record["id"]
        assert record["seq"] in fts and record["id"] in logged and record["id"] in created, record["id"]
        if record["type"] == "procedural":
            assert record["id"] in procedures
    assert logged <= {r["id"] for r in records}
    live_rent = store.scalar("SELECT COUNT(*) FROM records WHERE attribute = 'rent' AND status IN ('provisional','confirmed')")
    assert live_rent <= 1  # supersession and the new record commit together
    service.close()


def test_kill_9_mid_write_leaves_no_half_written_record(tmp_path):
    path = tmp_path / "memory.sqlite"
    setup = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=build_embedder("hashing", load_settings()))
    setup.grant("assistant", "user:alice", read=True, write=True, actor="test")
    setup.close()
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    for writes in (10, 40, 90):
        child = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(path)], cwd=ROOT, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "ready", child.stderr.read()
        for line in child.stdout:  # synchronised on the writer's own progress, not on a pause
            if int(line) >= writes:
                break
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
        assert child.returncode == -signal.SIGKILL
        _consistent(path)
    check = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=build_embedder("hashing", load_settings()))
    assert check.store.scalar("SELECT COUNT(*) FROM records") > 10  # the writers did write before they were killed
    check.close()
