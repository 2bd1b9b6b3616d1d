"""A failed write of a session's last activity, or of a key's last use, never fails the request.

Both writes are bookkeeping done on the way to a tool call (``HttpSessions.still_open``,
``keys.verify_token``). Here they fail for real: another process holds the SQLite file's write lock
(``BEGIN IMMEDIATE``), or, with ``--store-backend postgresql``, another connection holds the store's
whole-store advisory lock, while the SDK's own client calls ``memory_get`` (a read, which needs no
write lock) through the HTTP app served by uvicorn in this process. The call returns its record; the
failures are logged without the token or the record's text; once the lock is gone, the next request
writes both.

The waits are shortened so the lock's refusal comes in a moment instead of after the default 30 s:
the server's SQLite connection gets a 200 ms busy timeout, the PostgreSQL database a 200 ms
``lock_timeout``. Nothing waits on a clock: the store's clock is a fixed one moved by the test, and
the lock holder says when it holds the lock.
"""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import threading
from contextlib import contextmanager

import anyio
import pytest

from memory_core import MemoryService
from memory_core.clock import format_ts
from memory_core.embed.hashing import HashingEmbedder
from memory_core.mcp.http_app import McpHttpApp
from memory_core.mcp.keys import create_key
from memory_core.settings import default_settings
from tests.mcp.servers import http_client, run_async

CONTENT = "The user keeps the spare key under the blue flowerpot."
HOLD_SQLITE_LOCK = (
    "import sqlite3, sys\n"
    "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "conn.execute('BEGIN IMMEDIATE')\n"
    "print('locked', flush=True)\n"
    "sys.stdin.read()\n"
    "conn.execute('ROLLBACK')\n"
)


def _is_pg(target) -> bool:
    return str(target).startswith("postgresql")


@contextmanager
def _write_lock_held(target):
    """The store's write lock, held by someone else until the block ends."""
    if _is_pg(target):
        import psycopg

        from memory_core.store.pg.locks import STORE

        with psycopg.connect(str(target), autocommit=True) as other:
            other.execute("SELECT pg_advisory_lock(%s)", (STORE,))  # what a whole-store writer holds
            yield
            other.execute("SELECT pg_advisory_unlock(%s)", (STORE,))
        return
    holder = subprocess.Popen([sys.executable, "-c", HOLD_SQLITE_LOCK, str(target)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.stdin.close()
        assert holder.wait(timeout=60) == 0


def _short_waits(target) -> None:
    """Before the service opens: a PostgreSQL database whose sessions give up a lock wait after 200 ms."""
    if _is_pg(target):
        import psycopg
        from psycopg import sql

        with psycopg.connect(str(target), autocommit=True) as admin:
            name = admin.execute("SELECT current_database()").fetchone()[0]
            admin.execute(sql.SQL("ALTER DATABASE {} SET lock_timeout = '200ms'").format(sql.Identifier(name)))


@contextmanager
def _served(service):
    """The HTTP app under uvicorn on a free loopback port, in a thread of this process."""
    import uvicorn

    app = McpHttpApp(service)
    ready = threading.Event()
    app.on_ready = ready.set
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="mcp-http-under-test", daemon=True)
    thread.start()
    try:
        assert ready.wait(timeout=120), "the HTTP app did not start"
        yield app, f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=120)
        sock.close()


def _bookkeeping(service, session_id: str, key_id: str) -> tuple[str, str]:
    activity = service.store.scalar("SELECT last_activity_at FROM mcp_session_owners WHERE session_id = ?", (session_id,))
    used = service.store.scalar("SELECT last_used_at FROM api_keys WHERE id = ?", (key_id,))
    return activity, used


@pytest.mark.timeout(300)
def test_a_failed_activity_write_never_fails_the_tool_call(store_target, clock, caplog):
    _short_waits(store_target)
    settings = default_settings(mcp={"key_touch_interval_s": 0})  # the key's last use is written on every request
    service = MemoryService.open(store_target, settings, clock=clock, embedder=HashingEmbedder(), pooled=_is_pg(store_target))
    try:
        service.grant("assistant", "user:alice", read=True, write=True, actor="test")
        written = service.start_session(agent_id="assistant", user_id="alice").call_tool(
            "memory_write", {"type": "semantic", "content": CONTENT, "attribute": "spare_key", "source_kind": "agent_inference"})
        assert written["ok"], written
        key, token = create_key(service, kind="model", agent_id="assistant", user_id="alice", actor="test")
        if not _is_pg(store_target):
            with service.store.lock:
                service.store.conn.execute("PRAGMA busy_timeout=200")
        caplog.set_level(logging.WARNING, logger="memory_core.mcp")
        seen: dict = {}

        with _served(service) as (app, url):
            # The session's activity write is due at the next request and then not again for ever,
            # unless a failed write leaves it due (the retry this test checks).
            app.sessions.touch_every_s = float("inf")

            async def conversation():
                async with http_client(url, token) as client:
                    (entry,) = list(app.sessions._open.values())
                    with anyio.fail_after(120):  # the client's GET stream is open: the next request is our call
                        while entry.in_flight < 1:
                            await anyio.sleep(0.01)
                    seen["session"] = entry.memory.id
                    seen["before"] = _bookkeeping(service, entry.memory.id, key["id"])
                    clock.advance(minutes=1)
                    entry.touched = float("-inf")
                    with _write_lock_held(store_target):
                        seen["locked"] = await client.call_tool("memory_get", {"record_id": written["record_id"]})
                        seen["during"] = _bookkeeping(service, entry.memory.id, key["id"])
                    clock.advance(minutes=1)
                    seen["retried"] = await client.call_tool("memory_get", {"record_id": written["record_id"]})
                    seen["after"] = _bookkeeping(service, entry.memory.id, key["id"])

            run_async(conversation)

        locked = seen["locked"]
        assert not locked.is_error and locked.structured_content["record"]["content"] == CONTENT
        assert seen["during"] == seen["before"]  # both writes really failed
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert any(f"(memory session {seen['session']})" in w for w in warnings), warnings
        assert any(f"last use of key {key['id']}" in w for w in warnings), warnings
        assert token not in caplog.text and token[9:] not in caplog.text and CONTENT not in caplog.text

        assert not seen["retried"].is_error
        assert seen["after"] == (format_ts(clock.now()), format_ts(clock.now()))  # both tried again, and written
    finally:
        service.close()
