"""Who owns an MCP session, and the sweeps that end the sessions of dead or silent servers.

Real parts: the owners are real processes of this machine (a child started and waited for, so its
pid is known to be free; a child still running), their start times read from /proc. Only the
recorded start time of a row is made up where a test needs a pid that now runs another process.
"""

import os
import subprocess
import sys
import threading
from dataclasses import replace

import pytest

from memory_core import MemoryService
from memory_core.embed.hashing import HashingEmbedder
from memory_core.mcp import owners
from memory_core.mcp.memory_session import McpMemorySession, Principal

ALICE = Principal("assistant", "alice")
pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="the pid rule's start times come from /proc")


@pytest.fixture
def me():
    return owners.this_process()


@pytest.fixture
def child():
    """A running process of this host (its pid and identity are real)."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    yield proc
    proc.stdin.close()
    proc.wait(timeout=30)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    return proc.pid


def _open(service, owner, transport="stdio") -> McpMemorySession:
    return McpMemorySession(service, ALICE, transport=transport, owner=owner)


def _state(service, session_id) -> dict:
    row = service.store.query_one("SELECT ended_at, end_reason FROM sessions WHERE id = ?", (session_id,))
    runs = service.store.scalar("SELECT COUNT(*) FROM extraction_runs WHERE session_id = ?", (session_id,))
    ends = service.store.scalar("SELECT COUNT(*) FROM events WHERE kind = 'session.ended' AND payload LIKE ?",
                                (f'%{session_id}%',))
    return {"ended": row["ended_at"] is not None, "reason": row["end_reason"], "runs": runs, "ended_events": ends}


def test_this_process_is_named_by_its_start_time_from_proc(me):
    assert me.pid == os.getpid() and me.process_start == owners.process_start(os.getpid())
    boot, ticks = me.process_start.split(":")
    assert boot == open(owners.BOOT_ID).read().strip() and int(ticks) > 0
    assert owners.process_start(_dead_pid()) is None


def test_an_owner_row_is_recorded_when_the_session_opens_and_a_normal_end_says_why(service, alice, me):
    memory = _open(service, me, "http")
    row = service.store.query_one("SELECT * FROM mcp_session_owners WHERE session_id = ?", (memory.id,))
    assert (row["transport"], row["host_name"], row["pid"], row["process_start"]) == ("http", me.host_name, me.pid,
                                                                                       me.process_start)
    assert row["last_activity_at"] == row["started_at"] == "2026-03-05T10:00:00.000000Z"
    run_id = memory.end("deleted by the client")
    assert run_id and memory.end("again") == run_id
    assert _state(service, memory.id) == {"ended": True, "reason": "deleted by the client", "runs": 1, "ended_events": 1}


def test_a_dead_owner_on_this_host_has_its_session_ended_once_with_one_extraction(service, alice, me):
    memory = _open(service, replace(me, pid=_dead_pid(), process_start=me.process_start.split(":")[0] + ":1"))
    assert _state(service, memory.id)["ended"] is False
    ended = owners.sweep(service, me, idle_s=1800)
    assert [(e.session_id, e.reason) for e in ended] == [(memory.id, owners.GONE)]
    assert _state(service, memory.id) == {"ended": True, "reason": owners.GONE, "runs": 1, "ended_events": 1}
    run = service.store.query_one("SELECT status, trigger FROM extraction_runs WHERE session_id = ?", (memory.id,))
    assert (run["status"], run["trigger"]) == ("queued", "session_end")  # what an ordinary end queues
    assert owners.sweep(service, me, idle_s=1800) == []  # nothing left to end
    assert memory.end("the client left") is None  # the dead server's object (were it alive) ends nothing more
    assert _state(service, memory.id)["runs"] == 1


def test_a_pid_that_now_runs_another_process_counts_as_dead(service, alice, me, child):
    real = owners.process_start(child.pid)
    boot, ticks = real.split(":")
    alive = _open(service, replace(me, pid=child.pid, process_start=real))
    reused = _open(service, replace(me, pid=child.pid, process_start=f"{boot}:{int(ticks) - 1}"))  # the owner was older
    rebooted = _open(service, replace(me, pid=child.pid, process_start=f"not-this-boot:{ticks}"))
    ended = {e.session_id: e.reason for e in owners.sweep(service, me, idle_s=1800)}
    assert ended == {reused.id: owners.REUSED, rebooted.id: owners.REBOOTED}
    assert _state(service, alive.id) == {"ended": False, "reason": None, "runs": 0, "ended_events": 0}


def test_live_servers_never_end_each_others_sessions(service, alice, me, child):
    other = replace(me, pid=child.pid, process_start=owners.process_start(child.pid))
    theirs_stdio, theirs_http = _open(service, other), _open(service, other, "http")
    mine = _open(service, me, "http")
    assert owners.sweep(service, me, idle_s=1800) == []
    assert owners.sweep(service, other, idle_s=1800) == []  # and the other way round
    for memory in (theirs_stdio, theirs_http, mine):
        assert _state(service, memory.id)["ended"] is False


def test_another_hosts_session_is_left_to_the_idle_rule(service, clock, alice, me):
    elsewhere = replace(me, host_name="other-host.example", pid=_dead_pid())  # that pid is dead *here*, not there
    http, stdio = _open(service, elsewhere, "http"), _open(service, elsewhere)
    assert owners.sweep(service, me, idle_s=60) == []  # the pid rule never reaches another host
    clock.advance(seconds=owners.idle_limit_s(60))  # exactly at the limit: not yet
    assert owners.sweep(service, me, idle_s=60) == []
    clock.advance(seconds=1)
    ended = owners.sweep(service, me, idle_s=60)
    assert [e.session_id for e in ended] == [http.id] and ended[0].reason.startswith("idle")
    assert _state(service, http.id)["runs"] == 1
    assert _state(service, stdio.id)["ended"] is False  # a stdio session has no idle rule: only its own host ends it


def test_a_touch_keeps_an_http_session_from_the_idle_rule_and_says_when_it_has_ended(service, clock, alice, me):
    elsewhere = replace(me, host_name="other-host.example")
    memory = _open(service, elsewhere, "http")
    clock.advance(seconds=70)
    assert owners.touch(service, [memory.id]) == 1
    clock.advance(seconds=owners.idle_limit_s(60) - 10)
    assert owners.sweep(service, me, idle_s=60) == []  # its last sign of life is recent enough
    clock.advance(seconds=11)
    assert [e.session_id for e in owners.sweep(service, me, idle_s=60)] == [memory.id]
    assert owners.touch(service, [memory.id]) == 0 and owners.ended_elsewhere(service, memory.id)


def test_two_servers_sweeping_at_once_end_each_dead_session_once(make_target, clock, settings, me, monkeypatch):
    """The worst interleaving, forced: both sweeps have read the same open sessions before either ends one."""
    target = make_target("race.sqlite")
    services = [MemoryService.open(target, settings, clock=clock, embedder=HashingEmbedder()) for _ in range(2)]
    try:
        services[0].grant("assistant", "user:alice", read=True, write=True, actor="test")
        dead = replace(me, pid=_dead_pid())
        sessions = [_open(services[0], dead).id for _ in range(12)]
        start, both_read = threading.Barrier(2), threading.Barrier(2)
        read = owners.mcp_owners.open_owned_sessions

        def read_then_wait(store):
            rows = read(store)
            both_read.wait(60)
            return rows

        monkeypatch.setattr(owners.mcp_owners, "open_owned_sessions", read_then_wait)
        results: list = [None, None]

        def run(i):
            start.wait()
            try:
                results[i] = owners.sweep(services[i], me, idle_s=1800)
            except Exception as exc:  # noqa: BLE001 - reported by the assertion below
                results[i] = exc

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert all(isinstance(result, list) for result in results), results
        ended = [e.session_id for result in results for e in result]
        assert sorted(ended) == sorted(sessions)  # each once, between the two
        for session_id in sessions:
            assert _state(services[0], session_id) == {"ended": True, "reason": owners.GONE, "runs": 1, "ended_events": 1}
    finally:
        for service in services:
            service.close()


def test_a_killed_process_not_yet_reaped_counts_as_dead(service, alice, me):
    """A zombie keeps its /proc entry and its start time until its parent waits for it."""
    import signal

    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        start = owners.process_start(proc.pid)
        memory = _open(service, replace(me, pid=proc.pid, process_start=start))
        os.kill(proc.pid, signal.SIGKILL)
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # dead, and left unreaped
        assert open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"
        assert [e.reason for e in owners.sweep(service, me, idle_s=1800)] == [owners.GONE]
        assert _state(service, memory.id)["runs"] == 1
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
