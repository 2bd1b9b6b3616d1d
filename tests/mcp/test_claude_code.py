"""The real Claude Code (2.1.332, installed by ``make test`` into ``.tools/claude-code``) with our server and hooks.

Real here: the ``claude`` binary itself, its ``claude mcp add`` / ``mcp list`` commands, its MCP client
(it starts ``agent-memory mcp`` over stdio, lists our tools and calls them), its tool naming
(``mcp__agent-memory__memory_write``), its deferred-tool loading (``ToolSearch``), its permission checks
(``--allowedTools``), its hooks (run from ``.claude/settings.json`` with the payloads it builds) and the
JSONL transcript it writes. Configured exactly as docs/mcp.md's ``claude-mcp-add`` and
``claude-settings-hooks`` snippets say (with this test's paths).

Scripted: only the model. No Anthropic API is reachable from the tests, so ``ANTHROPIC_BASE_URL`` points
at tests/mcp/scripted_model.py, which answers the Messages API with fixed turns: load the memory tool,
call it, say "Done.". Whether a real model would choose these calls is not tested here; that the host
carries them to our server and back, and across two separate Claude Code processes, is.

Extraction in the SessionEnd hook runs the offline extractor (``MEMORY_EXTRACTION__EXTRACTOR=offline``),
as tests/mcp/test_config_snippets.py's hook test does: the hooks inherit Claude Code's environment,
which holds a (fake) ``ANTHROPIC_API_KEY``, and the ``auto`` default would otherwise send the transcript
to the scripted server. Nothing reaches the network: telemetry, error reporting, non-essential traffic
and the auto-updater are off, ``HOME`` is a temporary directory, the model is on loopback.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.scripted_model import ScriptedModel, last_user_blocks, text, tool_names, tool_use
from tests.mcp.servers import ROOT, open_service, prepare, server_env
from tests.mcp.test_config_snippets import STORE, snippets

pytestmark = [pytest.mark.model, pytest.mark.timeout(600)]

VERSION = "2.1.332"
CLAUDE = Path(os.environ.get("AGENT_MEMORY_CLAUDE_CODE") or ROOT / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude")
BIN = str(Path(sys.executable).parent)  # where `pip install` put the agent-memory console script
WRITE, SEARCH = "mcp__agent-memory__memory_write", "mcp__agent-memory__memory_search"
TIMEOUT_S = 180


@pytest.fixture(scope="module")
def claude() -> str:
    if not CLAUDE.exists():
        pytest.fail(f"Claude Code is not installed at {CLAUDE}: `make claude-code` installs it (make test does), "
                    f"or set AGENT_MEMORY_CLAUDE_CODE to a claude {VERSION} binary")
    done = subprocess.run([str(CLAUDE), "--version"], capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith(VERSION + " "), f"{CLAUDE} is not Claude Code {VERSION} (`make claude-code`): {done.stdout}{done.stderr}"
    return str(CLAUDE)


def host_env(home: Path, model_url: str = "http://127.0.0.1:9") -> dict[str, str]:
    env = server_env()
    env.update(HOME=str(home), PATH=BIN + os.pathsep + env.get("PATH", ""), ANTHROPIC_BASE_URL=model_url,
               ANTHROPIC_API_KEY="sk-ant-scripted-not-a-key", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
               MCP_TIMEOUT="120000",  # ms for our server to start (Python, the embedder) on a loaded machine
               MEMORY_EXTRACTION__EXTRACTOR="offline", MEMORY_EXTRACTION__REVIEWER="offline")
    for name in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"):
        env.pop(name, None)
    return env


def run(claude: str, args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([claude, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S)


def mcp_add(claude: str, store: Path, env: dict[str, str], cwd: Path) -> None:
    """``claude mcp add`` exactly as the doc's snippet, with this store's path."""
    words = shlex.split(snippets()["claude-mcp-add"].replace(STORE, str(store)))
    assert words[0] == "claude" and words[words.index("--") + 1] == "agent-memory"
    done = run(claude, words[1:], env, cwd)
    assert done.returncode == 0, done.stderr


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


def host_with_server(claude: str, tmp_path: Path) -> tuple[Path, Path, Path, dict[str, str]]:
    """A store alice's Claude Code agent may read, a HOME and a project for Claude Code, its
    environment, and our server added to its user config as docs/mcp.md says."""
    store = tmp_path / "memory.sqlite"
    prepare(store, grants=[("claude-code", "user:alice")])
    home, project = dirs(tmp_path)
    env = host_env(home)
    mcp_add(claude, store, env, project)
    return store, home, project, env


def test_claude_mcp_list_connects_to_the_server_and_reports_a_broken_store(claude, tmp_path):
    store, home, project, env = host_with_server(claude, tmp_path)
    listed = run(claude, ["mcp", "list"], env, project)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"^agent-memory: .*agent-memory mcp --path .*✔ Connected$", listed.stdout, re.M), listed.stdout

    broken_home = tmp_path / "broken-home"
    broken_home.mkdir()
    broken = host_env(broken_home)
    mcp_add(claude, tmp_path / "no-such-store.sqlite", broken, project)  # `agent-memory mcp` refuses it, exit 1
    listed = run(claude, ["mcp", "list"], broken, project)
    line = next(x for x in listed.stdout.splitlines() if x.startswith("agent-memory:"))
    assert "Connected" not in line and "Failed" in line, listed.stdout
    assert not (tmp_path / "no-such-store.sqlite").exists()  # and made no store there


class Script:
    """The model's side of one session: load ``tool`` with ToolSearch (retrying while the server
    connects, as Claude Code's answer asks), call it with ``arguments``, then say "Done."."""

    def __init__(self) -> None:
        self.tool, self.arguments, self.tool_searches = "", {}, 0

    def __call__(self, request: dict) -> list[dict]:
        if "ToolSearch" not in tool_names(request):
            return [text("ok")]  # any side request Claude Code might make (titles, summaries)
        called = {b["id"]: b["name"] for m in request["messages"] if m["role"] == "assistant"
                  and isinstance(m["content"], list) for b in m["content"] if b.get("type") == "tool_use"}
        results = [b for b in last_user_blocks(request) if b.get("type") == "tool_result"]
        last = called.get(results[-1]["tool_use_id"]) if results else None
        if last == self.tool:
            return [text("Done.")]
        if self.tool in tool_names(request):  # loaded: its schema is in the tools list now
            return [tool_use(self.tool, self.arguments)]
        if self.tool_searches >= 60:
            return [text(f"{self.tool} never became available.")]
        self.tool_searches += 1
        return [tool_use("ToolSearch", {"query": "select:" + self.tool})]


def tool_result(model: ScriptedModel, name: str) -> dict:
    """The tool_result block Claude Code sent back for the (only) call of ``name``."""
    for body in model.messages():
        for message in body.get("messages", []):
            uses = [b["id"] for b in message["content"] if isinstance(message["content"], list)
                    and b.get("type") == "tool_use" and b.get("name") == name] if message["role"] == "assistant" else []
            if uses:
                for later in body["messages"]:
                    for block in later["content"] if isinstance(later["content"], list) else []:
                        if block.get("type") == "tool_result" and block.get("tool_use_id") == uses[0]:
                            return block
    raise AssertionError(f"Claude Code sent no tool_result for {name}")


def result_text(block: dict) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def session(claude: str, model: ScriptedModel, script: Script, prompt: str, env: dict, cwd: Path) -> dict:
    model.script = script
    env = {**env, "ANTHROPIC_BASE_URL": model.base_url}
    done = run(claude, ["-p", prompt, "--output-format", "json", "--allowedTools", f"{WRITE},{SEARCH}"], env, cwd)
    assert done.returncode == 0, (done.stdout, done.stderr)
    output = json.loads(done.stdout)
    assert output["is_error"] is False and output["permission_denials"] == [] and output["result"] == "Done.", output
    return output


def test_two_claude_code_sessions_remember_through_the_server_and_the_hooks(claude, tmp_path):
    store, home, project, env = host_with_server(claude, tmp_path)
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(snippets()["claude-settings-hooks"].replace(STORE, str(store)))

    with ScriptedModel(Script()) as model:
        write = Script()
        write.tool, write.arguments = WRITE, {"type": "semantic", "content": "The user's favourite tea is genmaicha.",
                                              "attribute": "favourite_tea", "source_kind": "user_statement",
                                              "evidence": "my favourite tea is genmaicha"}
        first = session(claude, model, write, "Remember that my favourite tea is genmaicha", env, project)
        loaded = next(t for b in model.messages() for t in b.get("tools") or [] if t["name"] == WRITE)
        with open_service(store) as service:
            ours = next(t for t in service.tool_schemas() if t["name"] == "memory_write")
        assert loaded["input_schema"]["properties"].keys() == ours["input_schema"]["properties"].keys()
        written = tool_result(model, WRITE)
        assert not written.get("is_error"), written
        saved = json.loads(result_text(written))  # Claude Code hands the model our result's text (the JSON)
        assert saved["ok"] and saved["downgraded"], saved
        record_id = saved["record_id"]

        model.requests.clear()
        search = Script()
        search.tool, search.arguments = SEARCH, {"query": "favourite tea"}
        second = session(claude, model, search, "What tea do I like?", env, project)
        found = result_text(tool_result(model, SEARCH))
        assert "genmaicha" in found and record_id in found, found  # the record session 1 wrote
    assert first["session_id"] != second["session_id"]

    transcript = next((home / ".claude" / "projects").glob(f"*/{first['session_id']}.jsonl"))
    with open_service(store) as service:
        query, one = service.store.query, service.store.query_one
        host = one("SELECT * FROM host_sessions WHERE host_session_id = ?", (first["session_id"],))
        assert host and host["ended_at"] and host["last_event"].startswith("SessionEnd")
        assert host["transcript_lines"] == len(transcript.read_bytes().splitlines())  # the real file, read to its end
        turns = [(t["role"], t["content"]) for t in service.transcript(host["session_id"])]
        assert turns == [("user", "Remember that my favourite tea is genmaicha"), ("assistant", "Done.")]
        run_row = one("SELECT status, extractor FROM extraction_runs WHERE session_id = ?", (host["session_id"],))
        assert (run_row["status"], run_row["extractor"]) == ("succeeded", "offline")  # --extract ran it in the hook
        mcp = {r["id"] for r in query("SELECT id FROM sessions WHERE framework = 'mcp'")}
        assert len(mcp) == 2 and host["session_id"] not in mcp  # two MCP sessions, never joined to the hook's
        origin = one("SELECT session_id, source_kind FROM write_log WHERE record_id = ? AND operation = 'memory_write'",
                     (record_id,))
        assert origin and origin["session_id"] in mcp  # the search found the MCP write, not an extraction
        assert origin["source_kind"] == "agent_inference"  # a user_statement over MCP is downgraded (no transcript)
    # What could link them: Claude Code keeps our result's _meta on the tool-result line of its transcript.
    lines = [json.loads(line) for line in transcript.read_bytes().split(b"\n") if line.strip()]  # not str.splitlines:
    # the tool schemas Claude Code records hold U+2028, which it would split on
    linked = {line["mcpMeta"]["_meta"].get("agent-memory/session_id") for line in lines if "mcpMeta" in line}
    assert len(linked) == 1 and linked <= mcp, linked

def test_without_permission_claude_code_does_not_call_the_tool(claude, tmp_path):
    """The permission check is Claude Code's: with no --allowedTools, -p mode denies the call."""
    store, home, project, env = host_with_server(claude, tmp_path)
    write = Script()
    write.tool, write.arguments = WRITE, {"type": "semantic", "content": "The user's favourite tea is genmaicha."}
    with ScriptedModel(write) as model:
        done = run(claude, ["-p", "Remember that my favourite tea is genmaicha", "--output-format", "json"],
                   {**env, "ANTHROPIC_BASE_URL": model.base_url}, project)
        assert done.returncode == 0, done.stderr
        output = json.loads(done.stdout)
        assert [d["tool_name"] for d in output["permission_denials"]] == [WRITE], output
        assert tool_result(model, WRITE).get("is_error") is True
    with open_service(store) as service:
        assert service.store.query_one("SELECT COUNT(*) AS n FROM records")["n"] == 0
