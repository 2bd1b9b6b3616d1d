"""Real MCP servers for the tests: ``agent-memory mcp`` started as a process, and clients for it.

A server's output is read by a thread into memory (never a sleep): :meth:`ServerProcess.wait_for`
blocks until a line matching a pattern arrives. Stores are prepared in-process with the same
settings and the packaged embedder the server loads.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from contextlib import asynccontextmanager
from pathlib import Path

from memory_core import MemoryService
from memory_core.mcp.keys import create_key
from memory_core.settings import default_settings

ROOT = Path(__file__).resolve().parents[2]
READY = re.compile(r"agent-memory MCP on (http://\S+/mcp)")


def server_env(**settings: str) -> dict[str, str]:
    """The environment of a server process: this worktree first on the path, offline, ``MEMORY_*`` as given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.update(PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""), HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1")
    env.update({f"MEMORY_{k.upper()}": v for k, v in settings.items()})
    return env


def open_service(target) -> MemoryService:
    """The store as the server sees it (default settings, the packaged embedder)."""
    return MemoryService.open(target, default_settings())


def prepare(target, grants=(("assistant", "user:alice"), ("other", "user:bob"))) -> None:
    """Grants read and write for each (agent, scope)."""
    with open_service(target) as service:
        for agent, scope in grants:
            service.grant(agent, scope, read=True, write=True, actor="test")


def new_key(target, agent_id: str, user_id: str, kind: str = "model", project_id: str | None = None) -> tuple[str, str]:
    """(key id, token) of a new key on the store."""
    with open_service(target) as service:
        row, token = create_key(service, kind=kind, agent_id=agent_id, user_id=user_id, project_id=project_id, actor="test")
    return row["id"], token


class ServerProcess:
    """``agent-memory mcp --http`` on a free loopback port; every output line is kept."""

    def __init__(self, target, *, log_level: str = "warning", extra_args=(), wait: bool = True, **settings: str) -> None:
        command = [sys.executable, "-m", "memory_core.cli", "mcp", "--http", "--port", "0", "--path", str(target),
                   "--log-level", log_level, *extra_args]
        self.proc = subprocess.Popen(command, cwd=ROOT, env=server_env(**settings), stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, encoding="utf-8", errors="replace")
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        if wait:
            self.ready()

    @classmethod
    def starting(cls, target, **options) -> "ServerProcess":
        """Launch a server without waiting for it (call :meth:`ready`), so several can start at once."""
        return cls(target, wait=False, **options)

    def ready(self) -> "ServerProcess":
        """Block until the server prints its URL (its start-up sweep is done by then)."""
        self.url = self.wait_for(READY).group(1)
        self.base = self.url[: -len("/mcp")]
        return self

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, pattern: re.Pattern, timeout: float = 120) -> re.Match:
        """Block until an output line matches ``pattern`` (fails if the process exits first)."""
        while True:
            line = self._queue.get(timeout=timeout)
            if line is None:
                raise AssertionError("the server exited:\n" + self.output())
            found = pattern.search(line)
            if found:
                return found

    def output(self) -> str:
        return "".join(self.lines)

    def stop(self) -> int:
        """SIGTERM and wait: uvicorn shuts down, every open session ends."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)

    def kill(self) -> None:
        """SIGKILL now (nothing gets to clean up)."""
        self.proc.kill()
        self.proc.wait(timeout=30)

    def __enter__(self) -> "ServerProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


@asynccontextmanager
async def http_client(url: str, token: str | None, mode: str = "auto", headers: dict[str, str] | None = None):
    """The SDK's own client (``mcp.Client``) over streamable HTTP with a bearer token."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    all_headers = {"Authorization": f"Bearer {token}"} if token else {}
    all_headers.update(headers or {})
    async with create_mcp_http_client(headers=all_headers) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


def stdio_parameters(target, agent_id: str = "assistant", user_id: str = "alice", *extra: str, **settings: str):
    """How a host launches the stdio server (the SDK's ``StdioServerParameters``)."""
    from mcp import StdioServerParameters

    return StdioServerParameters(command=sys.executable, cwd=str(ROOT), env=server_env(**settings),
                                 args=["-m", "memory_core.cli", "mcp", "--path", str(target), "--agent-id", agent_id,
                                       "--user-id", user_id, *extra])


def instructions_of(client) -> str | None:
    """The instructions the client received (at initialize, or in server/discover on 2026-07-28)."""
    session = client.session
    result = session.initialize_result or session.discover_result
    return result.instructions


def run_async(fn, *args):
    """``run_async(fn, *args)`` on a thread of its own: the browser tests' Playwright keeps an event
    loop running on the main thread for the rest of the session, where ``anyio.run`` would refuse."""
    import anyio

    outcome: dict = {}

    def target():
        try:
            outcome["value"] = anyio.run(fn, *args)
        except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="mcp-test-client")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
