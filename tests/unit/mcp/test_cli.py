"""The MCP commands' own refusals: what a person sees when something is missing or contradictory."""

import subprocess
import sys
from pathlib import Path

import pytest

from memory_core.cli import main
from memory_core.store.backend import open_store

ROOT = Path(__file__).resolve().parents[3]


def made_store(tmp_path) -> str:
    """An existing (migrated, empty) store file: these commands refuse a missing one."""
    path = tmp_path / "m.sqlite"
    open_store(path, "2026-01-01T00:00:00Z").close()
    return str(path)


def test_the_mcp_command_says_how_to_install_the_sdk_when_it_is_missing(tmp_path):
    code = ("import sys; sys.modules['mcp'] = None; sys.modules['mcp_types'] = None\n"
            "from memory_core.cli import main\n"
            f"sys.exit(main(['mcp', '--path', {str(tmp_path / 'm.sqlite')!r}, '--agent-id', 'a', '--user-id', 'u']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 2
    assert "pip install 'agent-memory[mcp]'" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("argv, message", [
    (["mcp", "--path", "{store}", "--agent-id", "a"], "needs --agent-id and --user-id"),
    (["mcp", "--http", "--path", "{store}", "--agent-id", "a"], "identity comes from each request's key"),
    (["mcp", "--path", "{store}", "--agent-id", "a/b", "--user-id", "u"], "agent_id must be"),
    (["keys", "revoke", "key_0000000000000000", "--path", "{store}"], "no key"),
    (["keys", "create", "--agent-id", "a", "--user-id", "u:x", "--path", "{store}"], "user_id must be"),
    (["hook", "Stop", "--path", "{store}"], "a local hook needs --agent-id and --user-id"),
])
def test_bad_arguments_are_refused_with_a_reason(tmp_path, capsys, monkeypatch, argv, message):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"session_id": "s"}')))
    code = main([a.replace("{store}", made_store(tmp_path)) for a in argv])
    assert code in (1, 2)  # 2 is the CLI's refusal; a hook never exits 2 (Claude Code would block), it exits 1
    assert (code == 1) == (argv[0] == "hook")
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["keys", "create", "--agent-id", "a", "--user-id", "u"], ["keys", "list"], ["keys", "revoke", "key_0000000000000000"],
    ["mcp", "--agent-id", "a", "--user-id", "u"], ["mcp", "--http", "--port", "0"],
    ["hook", "SessionStart", "--agent-id", "a", "--user-id", "u"],
])
def test_a_missing_store_is_refused_and_not_created(tmp_path, capsys, monkeypatch, argv):
    import io

    payload = b'{"session_id": "s-1", "hook_event_name": "SessionStart", "source": "startup"}'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(payload)))
    missing = tmp_path / "typo" / "m.sqlite"
    missing.parent.mkdir()
    code = main([*argv, "--path", str(missing)])
    err = capsys.readouterr().err
    assert code == 1  # the store is unusable (a hook's refusals are exit 1 too, never 2)
    assert "no store at" in err and "agent-memory init" in err and "Traceback" not in err
    assert list(missing.parent.iterdir()) == []  # nothing written: no store file, no -wal or -shm


def test_keys_create_prints_the_token_last_and_keys_list_never_shows_it(tmp_path, capsys):
    from memory_core import MemoryService
    from memory_core.mcp.keys import verify_token
    from memory_core.settings import default_settings

    store = made_store(tmp_path)
    assert main(["keys", "create", "--agent-id", "assistant", "--user-id", "alice", "--kind", "host", "--path", store]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    token = out[-1]
    assert token.startswith("am_host_") and "shown once" in out[-2]
    assert not any("cannot write" in line for line in out)  # a host key writes no records: no grant hint
    assert main(["keys", "create", "--agent-id", "assistant", "--user-id", "alice", "--path", store]) == 0
    model_out = capsys.readouterr().out
    assert "cannot write user:alice yet" in model_out and "agent-memory grant assistant user:alice --write" in model_out
    assert main(["keys", "list", "--path", store]) == 0 and main(["keys", "list", "--json", "--path", store]) == 0
    listed = capsys.readouterr().out
    assert token not in listed and token[8:] not in listed and "host" in listed
    with MemoryService.open(store, default_settings()) as service:
        assert verify_token(service, token).user_id == "alice"


def test_the_http_servers_connections_send_each_write_at_once(tmp_path, monkeypatch):
    """Nagle's algorithm is off on every connection the HTTP server accepts: with it on, the second
    part of a response (the body after the headers) waited for the client's delayed ACK, about 40 ms
    a request. The socket the command hands uvicorn is taken (uvicorn itself is not started) and a
    connection is accepted on it as uvicorn accepts one, with asyncio's create_server."""
    import socket

    import uvicorn

    from tests.mcp.servers import run_async

    handed = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: handed.extend(sockets or []))
    assert main(["mcp", "--http", "--port", "0", "--path", made_store(tmp_path)]) == 0
    (listener,) = handed

    async def accept_one() -> int:
        import asyncio

        loop = asyncio.get_running_loop()
        seen = loop.create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport):
                seen.set_result(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await loop.create_server(Probe, sock=listener)
        _, writer = await asyncio.open_connection(*listener.getsockname()[:2])
        try:
            return await seen
        finally:
            writer.close()
            server.close()
            await server.wait_closed()

    assert run_async(accept_one) != 0
