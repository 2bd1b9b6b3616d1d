"""Every configuration snippet in docs/mcp.md parses, and the command line it names really starts our
server (stdio and HTTP, through the SDK's client) or records hook events (run as the host would)."""

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.mcp.servers import (
    ROOT, ServerProcess, http_client, new_key, open_service, prepare, run_async, server_env,
)
from tests.unit.mcp.hook_fixture import fixture_events, replay

pytestmark = pytest.mark.model

DOC = ROOT / "docs" / "mcp.md"
STORE = "/home/you/.agent-memory/memory.sqlite"
MODEL_TOKEN, HOST_TOKEN, BASE = "am_model_PASTE-THE-TOKEN", "am_host_PASTE-THE-TOKEN", "http://127.0.0.1:8765"
EXPECTED = {"claude-mcp-add", "claude-project-mcp-json", "claude-settings-hooks", "claude-mcp-add-http",
            "claude-settings-hooks-remote", "claude-desktop", "cursor-stdio", "cursor-http", "vscode-stdio", "vscode-http"}
COMMAND = str(Path(sys.executable).parent / "agent-memory")  # the console script `pip install` puts on PATH


def snippets() -> dict[str, str]:
    """name -> body of each code block that follows a ``<!-- snippet: name -->`` line."""
    found = re.findall(r"<!-- snippet: ([\w-]+) -->\n```\w*\n(.*?)\n```", DOC.read_text(), flags=re.S)
    return dict(found)


def test_the_doc_has_every_snippet_once():
    names = re.findall(r"<!-- snippet: ([\w-]+) -->", DOC.read_text())
    assert sorted(names) == sorted(EXPECTED) and set(snippets()) == EXPECTED


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    target = tmp_path_factory.mktemp("snippets") / "memory.sqlite"
    prepare(target, grants=[(agent, "user:alice") for agent in ("claude-code", "claude-desktop", "cursor", "vscode")])
    return {"target": target, "model": new_key(target, "claude-code", "alice")[1],
            "host": new_key(target, "claude-code", "alice", kind="host")[1]}


def _fill(text: str, world, base: str = BASE) -> str:
    return (text.replace(STORE, str(world["target"])).replace(MODEL_TOKEN, world["model"])
            .replace(HOST_TOKEN, world["host"]).replace(BASE, base))


def _stdio_works(command: str, args: list[str]) -> None:
    assert command == "agent-memory" and args[0] == "mcp"
    params = StdioServerParameters(command=COMMAND, args=args, env=server_env(), cwd=str(ROOT))

    async def connect():
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"memory_search", "memory_get", "memory_write", "memory_revise", "memory_forget"}
            result = await client.call_tool("memory_search", {"query": "anything stored"})
            assert not result.is_error, result

    run_async(connect)


@pytest.mark.parametrize("name, servers_key", [("claude-project-mcp-json", "mcpServers"), ("claude-desktop", "mcpServers"),
                                               ("cursor-stdio", "mcpServers"), ("vscode-stdio", "servers")])
def test_json_stdio_snippets_start_the_server(world, name, servers_key):
    server = json.loads(_fill(snippets()[name], world))[servers_key]["agent-memory"]
    if servers_key == "servers":
        assert server["type"] == "stdio"
    _stdio_works(server["command"], server["args"])


def test_claude_mcp_add_starts_the_server(world):
    words = shlex.split(_fill(snippets()["claude-mcp-add"], world))
    assert words[:3] == ["claude", "mcp", "add"] and "--scope" in words
    dash = words.index("--")
    assert words[dash - 1] == "agent-memory"
    _stdio_works(words[dash + 1], words[dash + 2:])


def _http_works(url: str, headers: dict[str, str]) -> None:
    async def connect():
        async with http_client(url, None, headers=headers) as client:
            assert len((await client.list_tools()).tools) == 5

    run_async(connect)


def test_http_snippets_reach_the_server_with_their_key(world):
    with ServerProcess(world["target"]) as server:
        words = shlex.split(_fill(snippets()["claude-mcp-add-http"], world, server.base))
        assert words[:3] == ["claude", "mcp", "add"] and words[words.index("--transport") + 1] == "http"
        url = next(w for w in words if w.startswith("http://"))
        header = words[words.index("--header") + 1]
        key, value = header.split(": ", 1)
        _http_works(url, {key: value})
        cursor = json.loads(_fill(snippets()["cursor-http"], world, server.base))["mcpServers"]["agent-memory"]
        _http_works(cursor["url"], cursor["headers"])
        vscode = json.loads(_fill(snippets()["vscode-http"], world, server.base))["servers"]["agent-memory"]
        assert vscode["type"] == "http"
        _http_works(vscode["url"], vscode["headers"])


def _run_hooks(settings: dict, tmp_path: Path, host_session_id: str) -> list[int]:
    env = server_env()
    env.update(settings.get("env", {}))
    env["PATH"] = str(Path(COMMAND).parent) + ":" + env.get("PATH", "")
    commands = {event: entries[0]["hooks"][0] for event, entries in settings["hooks"].items()}
    assert set(commands) == {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}

    def call(event, payload):
        hook = commands[event]
        assert hook["type"] == "command" and shlex.split(hook["command"])[:3] == ["agent-memory", "hook", event]
        payload = {**payload, "session_id": host_session_id}  # each test its own host session
        done = subprocess.run(hook["command"], shell=True, input=json.dumps(payload).encode(), env=env, cwd=str(tmp_path),
                              capture_output=True, timeout=hook.get("timeout", 60))
        assert done.returncode == 0, done.stderr.decode()
        assert done.stdout == b""  # nothing for the model unless --context asks for it
        return done.returncode

    return replay(fixture_events(), tmp_path / "transcript.jsonl", call)


def _hook_session(target, host_session_id: str) -> dict:
    with open_service(target) as service:
        row = service.store.query_one("SELECT session_id, ended_at FROM host_sessions WHERE host_session_id = ?",
                                      (host_session_id,))
        turns = service.transcript(row["session_id"])
        run = service.store.query_one("SELECT status FROM extraction_runs WHERE session_id = ?", (row["session_id"],))
        return {"ended": row["ended_at"], "turns": len(turns), "run": run["status"]}


def test_the_local_hook_settings_record_the_conversation_and_extract_it(world, tmp_path):
    _run_hooks(json.loads(_fill(snippets()["claude-settings-hooks"], world)), tmp_path, "local-1")
    state = _hook_session(world["target"], "local-1")
    assert state["ended"] and state["turns"] == 5 and state["run"] == "succeeded"  # --extract ran it in the hook


def test_the_remote_hook_settings_record_through_the_server(world, tmp_path):
    with ServerProcess(world["target"]) as server:
        _run_hooks(json.loads(_fill(snippets()["claude-settings-hooks-remote"], world, server.base)), tmp_path, "remote-1")
    state = _hook_session(world["target"], "remote-1")
    assert state["ended"] and state["turns"] == 5 and state["run"] == "queued"  # the worker runs it
