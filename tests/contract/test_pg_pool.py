"""A pooled PostgreSQL service (``MemoryService.open(..., pooled=True)``, as the MCP HTTP server
opens it): threads run on their own connections, nothing crosses between principals, a connection
goes back clean, and one the server ended is replaced."""

import threading

import psycopg
import pytest

from memory_core import FixedClock, MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder

USERS = ("alice", "bob")
THREADS_PER_USER = 3


@pytest.fixture
def pooled(new_target):
    url = new_target("postgresql")
    settings = default_settings()
    settings.postgres.pool_min_size, settings.postgres.pool_max_size = 2, 4
    svc = MemoryService.open(url, settings, clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder(),
                             pooled=True)
    for user in USERS:
        svc.grant(f"agent_{user}", f"user:{user}", read=True, write=True, actor="t")
    yield svc, url
    svc.close()


def _backend_pid(store) -> int:
    with store.lock:
        return int(store.conn.execute_native("SELECT pg_backend_pid()").fetchone()[0])


def test_threads_of_two_users_run_side_by_side_and_nothing_crosses(pooled):
    svc, _ = pooled
    start, errors, pids = threading.Barrier(len(USERS) * THREADS_PER_USER), [], set()
    written: dict[str, list[str]] = {u: [] for u in USERS}
    guard = threading.Lock()

    def host(user: str, n: int) -> None:
        try:
            session = svc.start_session(agent_id=f"agent_{user}", user_id=user)
            start.wait(timeout=60)
            for i in range(4):
                result = session.call_tool("memory_write", {"type": "episodic", "target": "personal",
                                                            "content": f"{user} shipped build {n}.{i} to staging."})
                assert result["ok"], result
                with guard:
                    written[user].append(result["record_id"])
                    pids.add(_backend_pid(svc.store))
                found = session.call_tool("memory_search", {"query": f"which build did {user} ship to staging?"})
                other = [r for r in found["results"] if user not in r["content"]]
                assert not other, other
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(repr(exc))

    threads = [threading.Thread(target=host, args=(u, n)) for u in USERS for n in range(THREADS_PER_USER)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    assert len(pids) > 1  # the threads ran on more than one connection
    for user, other in (("alice", "bob"), ("bob", "alice")):
        session = svc.start_session(agent_id=f"agent_{user}", user_id=user)
        assert len(written[user]) == 4 * THREADS_PER_USER
        for record_id in written[user]:
            assert session.call_tool("memory_get", {"record_id": record_id})["ok"]
        for record_id in written[other]:
            assert session.call_tool("memory_get", {"record_id": record_id})["error"]["code"] == "not_found"


def test_a_connection_goes_back_clean(pooled):
    """A transaction that failed leaves nothing open and nothing queued on its connection; the
    store's session settings are on every connection of the pool; a SET LOCAL ends with its transaction."""
    svc, _ = pooled
    store = svc.store
    with pytest.raises(RuntimeError), store.transaction() as conn:
        conn.execute("INSERT INTO store_meta (key, value) VALUES ('half', '1')")
        conn.defer("INSERT INTO store_meta (key, value) VALUES ('queued', '1')")
        conn.execute_native("SET LOCAL work_mem = '7MB'")
        raise RuntimeError("the body failed")
    assert store.scalar("SELECT COUNT(*) FROM store_meta WHERE key IN ('half', 'queued')") == 0
    seen, ready, done = [], threading.Barrier(4), threading.Event()

    def look() -> None:
        with store.lock:  # three threads hold three connections at once
            conn = store.conn
            seen.append((conn.raw.info.transaction_status, list(conn.deferred),
                         conn.execute_native("SHOW ivfflat.probes").fetchone()[0],
                         conn.execute_native("SHOW work_mem").fetchone()[0],
                         conn.execute_native("SELECT pg_backend_pid()").fetchone()[0]))
            ready.wait(timeout=60)
            done.wait(timeout=60)

    threads = [threading.Thread(target=look) for _ in range(3)]
    for t in threads:
        t.start()
    ready.wait(timeout=60)
    done.set()
    for t in threads:
        t.join(timeout=60)
    probes = str(default_settings().postgres.ivf_probes)
    assert len({pid for *_, pid in seen}) == 3
    for status, deferred, shown_probes, work_mem, _ in seen:
        assert status == psycopg.pq.TransactionStatus.IDLE and deferred == []
        assert shown_probes == probes and work_mem != "7MB"


def test_a_connection_the_server_ended_is_replaced(pooled):
    svc, url = pooled
    session = svc.start_session(agent_id="agent_alice", user_id="alice")
    written = session.call_tool("memory_write", {"type": "episodic", "target": "personal",
                                                 "content": "Alice keeps the release checklist in the wiki."})
    assert written["ok"], written
    victims = {_backend_pid(svc.store)}
    with psycopg.connect(url, autocommit=True) as admin:
        victims |= {row[0] for row in admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")}
        for pid in victims:
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))
    got = session.call_tool("memory_get", {"record_id": written["record_id"]})
    assert got["ok"], got
    assert _backend_pid(svc.store) not in victims
    found = session.call_tool("memory_search", {"query": "where is the release checklist?"})
    assert [r["id"] for r in found["results"]][:1] == [written["record_id"]], found
