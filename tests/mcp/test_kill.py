"""kill -9 of the HTTP server in the middle of a write: nothing is half-written, and the client's next
session (a new server on the same store, the same key) works.

On PostgreSQL the kill lands inside the write's transaction for certain: the test holds a lock the
write needs for its write-log row (after the record row is written), waits until the server's
backend is queued on it (seen in ``pg_locks``), and kills then. On SQLite the kill lands while the
client's next write is in flight, right after the server acknowledged the N-th one (the event the
test waits on). Neither waits on a clock.
"""

import threading
import time

import httpx
import psycopg
import pytest

from memory_core.store.doctor import run_doctor
from tests import pg_server
from tests.mcp.raw_client import RawHttpSession
from tests.mcp.servers import ServerProcess, http_client, new_key, open_service, prepare, run_async

pytestmark = pytest.mark.model


def _whole(target) -> dict:
    """Every record is whole: its write-log row and its events exist; every write-log row has its record."""
    with open_service(target) as service:
        report = run_doctor(service.store, service.settings)
        assert report.ok, report.text()
        store = service.store
        records = {r["id"] for r in store.query("SELECT id FROM records")}
        logged = {r["record_id"] for r in store.query("SELECT record_id FROM write_log WHERE outcome = 'created'")}
        assert records == logged
        evented = {r["record_id"] for r in store.query("SELECT record_id FROM events WHERE kind = 'record.created'")}
        assert records <= evented | {None}
        return {"records": len(records), "contents": {r["content"] for r in store.query("SELECT content FROM records")}}


def _next_session_works(target, token: str, expect: set[str]) -> None:
    async def again():
        async with http_client(server.url, token) as client:
            for content in expect:
                found = await client.call_tool("memory_search", {"query": content})
                assert content in [r["content"] for r in found.structured_content["results"]]
            wrote = await client.call_tool("memory_write", {"type": "semantic", "content": "After the crash: the spare key is blue."})
            assert not wrote.is_error

    with ServerProcess(target) as server:
        run_async(again)


@pytest.mark.parametrize("acknowledged", [1, 4])
def test_sqlite_kill_while_the_next_write_is_in_flight(tmp_path, acknowledged):
    target = tmp_path / "m.sqlite"
    prepare(target)
    _, token = new_key(target, "assistant", "alice")
    server = ServerProcess(target)
    session = RawHttpSession(server.url, token)
    session.initialize()
    acked: list[str] = []
    reached = threading.Event()

    def writer():
        i = 0
        try:
            while True:
                reply = session.call("memory_write", {"type": "semantic", "content": f"Parcel {i} is in locker {i * 7}.",
                                                      "attribute": f"parcel_{i}"})
                acked.append(reply["result"]["structuredContent"]["record_id"])
                if len(acked) == acknowledged:
                    reached.set()
                i += 1
        except (httpx.HTTPError, AssertionError, KeyError):
            return  # the server is gone

    thread = threading.Thread(target=writer)
    thread.start()
    assert reached.wait(120), server.output()
    server.kill()
    thread.join(60)
    session.close()
    state = _whole(target)
    assert state["records"] >= acknowledged  # every acknowledged write is there, whole; at most one more
    assert state["records"] <= len(acked) + 1
    _next_session_works(target, token, {f"Parcel {i} is in locker {i * 7}." for i in range(acknowledged)})


def test_postgresql_kill_inside_the_write_transaction():
    url = pg_server.create_database()
    try:
        prepare(url)
        _, token = new_key(url, "assistant", "alice")
        server = ServerProcess(url)
        session = RawHttpSession(server.url, token)
        session.initialize()
        first = session.call("memory_write", {"type": "semantic", "content": "The blue bike is in the shed."})
        assert not first["result"]["isError"]
        with psycopg.connect(url) as blocker:
            blocker.execute("LOCK TABLE write_log IN SHARE MODE")  # the next write's log row must wait for it
            thread = threading.Thread(target=lambda: _quietly(session.call, "memory_write", {
                "type": "semantic", "content": "The red kayak is under the stairs."}))
            thread.start()
            with psycopg.connect(url, autocommit=True) as watcher:
                pid = _wait_for_waiting_writer(watcher)
                held = {r[0] for r in watcher.execute(
                    "SELECT c.relname FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                    "WHERE l.pid = %s AND l.granted AND l.mode = 'RowExclusiveLock'", (pid,)).fetchall()}
                assert "records" in held  # the record row is written, its transaction still open
                server.kill()
            blocker.rollback()
        thread.join(60)
        session.close()
        state = _whole(url)
        assert "The blue bike is in the shed." in state["contents"]
        assert state["records"] in (1, 2)  # the killed write is all there or not at all (checked by _whole)
        _next_session_works(url, token, {"The blue bike is in the shed."})
    finally:
        pg_server.drop_database(url)


def _quietly(fn, *args):
    try:
        fn(*args)
    except (httpx.HTTPError, AssertionError, KeyError):
        pass


def _wait_for_waiting_writer(watcher) -> int:
    """The pid of the backend queued on the write_log lock. PostgreSQL has no way to block until a
    lock has a waiter, so the condition is polled (a 2 ms pause between looks keeps it off the CPU)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        row = watcher.execute("SELECT l.pid FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                              "WHERE c.relname = 'write_log' AND NOT l.granted").fetchone()
        if row:
            return row[0]
        time.sleep(0.002)
    raise AssertionError("the server's write never reached its write-log row")
