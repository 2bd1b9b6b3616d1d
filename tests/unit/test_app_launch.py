from pathlib import Path

from memory_core import app_launch as launch


def test_the_server_command_is_headless_and_quiet():
    command = launch.streamlit_command(8600, "127.0.0.1")
    joined = " ".join(command)
    assert command[1:4] == ["-m", "streamlit", "run"] and command[4].endswith("app.py")
    for flag in ("--server.headless true", "--server.address 127.0.0.1", "--server.port 8600",
                 "--server.fileWatcherType none", "--browser.gatherUsageStats false"):
        assert flag in joined


def test_demo_mode_sets_the_store_accounts_and_offline_flags(tmp_path):
    env = launch.app_environment(tmp_path / "demo.sqlite", demo=True, base={})
    assert env["MEMORY_STORE"] == str(tmp_path / "demo.sqlite")
    assert env["MEMORY_UI__DEMO_MODE"] == "true" and env["HF_HUB_OFFLINE"] == "1"
    assert Path(env["MEMORY_UI__ACCOUNTS_FILE"]) == launch.DEMO_ACCOUNTS
    mine = launch.app_environment(tmp_path / "s.sqlite", demo=True, base={"MEMORY_UI__ACCOUNTS_FILE": "/etc/accounts.toml"})
    assert mine["MEMORY_UI__ACCOUNTS_FILE"] == "/etc/accounts.toml"
    assert "MEMORY_UI__DEMO_MODE" not in launch.app_environment(tmp_path / "s.sqlite", demo=False, base={})


def test_a_missing_demo_store_is_built_with_progress(tmp_path, monkeypatch):
    import memory_core.demo

    calls = []

    def build(path, progress=None, **_):
        progress("replaying session 1")
        calls.append(path)

    monkeypatch.setattr(memory_core.demo, "build_demo_store", build)
    lines = []
    launch.ensure_store(tmp_path / "demo.sqlite", demo=True, out=lines.append)
    assert calls == [tmp_path / "demo.sqlite"]
    assert lines[0].startswith("building the demo store") and lines[1] == "  replaying session 1"


def test_serve_prints_the_localhost_url(tmp_path, capsys):
    (tmp_path / "s.sqlite").write_bytes(b"")
    assert launch.serve(str(tmp_path / "s.sqlite"), 8765, False, "0.0.0.0", execute=False) == 0
    assert "http://localhost:8765" in capsys.readouterr().out
