"""The notebook's admin app launcher: a free port, /_stcore/health, and a clean stop of the
server's whole process group. Fast tests use a tiny stand-in server; the e2e test runs the real
``streamlit run app.py``."""

from __future__ import annotations

import os
import sys
import urllib.request
from pathlib import Path

import pytest

from memory_core.app_launch import APP
from memory_core import MemoryService
from memory_core.notebook import AdminApp, AppLaunchError, launch_app
from tests.fakes import HashingEmbedder

STAND_IN = '''
import http.server, subprocess, sys
port, pidfile = int(sys.argv[1]), sys.argv[2]
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(pidfile, "w").write(str(child.pid))

class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/_stcore/health" else 404)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass

http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
'''


class StandIn(AdminApp):
    """Runs a small health-answering server (which starts a child of its own) instead of streamlit."""

    def __init__(self, store, workdir: Path, script: str = STAND_IN, **options) -> None:
        super().__init__(store, **options)
        self.script = workdir / "server.py"
        self.script.write_text(script)
        self.pidfile = workdir / "child.pid"

    def command(self) -> list[str]:
        return [sys.executable, str(self.script), str(self.port), str(self.pidfile)]


def running(pid: int) -> bool:
    """Whether ``pid`` is a live (non-zombie) process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def _resolved(store):
    return store if isinstance(store, str) else Path(store).resolve()


@pytest.fixture
def store(service):
    """The service's store as the app is given it: a file path, or (``--store-backend postgresql``) the
    full URL. ``Path(url)`` would be a relative folder named ``postgresql:`` (it once was, and was committed)."""
    from memory_core.notebook.launcher import store_target

    return store_target(service)


def test_the_server_runs_as_agent_memory_serve_would(store):
    app = AdminApp(store, port=8765, clock="2026-04-20T09:00:00Z", embedder="tests.fakes:HashingEmbedder")
    command = app.command()
    assert command[1:4] == ["-m", "streamlit", "run"] and command[4] == str(APP)
    assert "--server.headless" in command and command[command.index("--server.port") + 1] == "8765"
    env = app.environment()
    assert env["MEMORY_STORE"] == str(_resolved(store)) and env["HF_HUB_OFFLINE"] == "1"
    assert env["MEMORY_UI_CLOCK"] == "2026-04-20T09:00:00Z" and env["MEMORY_UI_EMBEDDER"] == "tests.fakes:HashingEmbedder"
    assert app.demo is False and "MEMORY_UI__DEMO_MODE" not in env
    assert app.working_directory() == APP.parent


@pytest.mark.sqlite_only
def test_a_demo_store_runs_in_demo_mode(store, service):
    service.store.set_meta("demo_now", "2026-04-20T09:00:00.000000Z")
    app = AdminApp(store)
    assert app.demo is True and app.environment()["MEMORY_UI__DEMO_MODE"] == "true"


def test_it_starts_on_a_free_port_answers_health_and_stops_its_whole_group(store, tmp_path):
    app = StandIn(store, tmp_path)
    with app:
        assert app.running and app.port and answers(app.url)
        child = int(app.pidfile.read_text())
        assert running(child)
        markup = app._repr_html_()
        assert f'src="{app.url}"' in markup and "<iframe" in markup
        assert os.getpgid(child) == app.process.pid  # the child is in the server's own process group
    assert not app.running and not running(child) and not answers(app.url)
    assert "stopped" in app._repr_html_()
    app.stop()  # a second stop is harmless


def test_launch_app_takes_a_service_and_returns_it_started(service, tmp_path, monkeypatch):
    started: list[StandIn] = []

    def stand_in(path, **options):
        app = StandIn(path, tmp_path, **options)
        started.append(app)
        return app

    monkeypatch.setattr("memory_core.notebook.launcher.AdminApp", stand_in)
    app = launch_app(service, height=500)
    try:
        from memory_core.notebook.launcher import store_target

        assert app is started[0] and app.store == _resolved(store_target(service)) and app.running
        assert 'height="500"' in app._repr_html_()
    finally:
        app.stop()


def test_a_server_that_exits_is_reported_with_its_output(store, tmp_path):
    app = StandIn(store, tmp_path, script="import sys\nprint('no such store', flush=True)\nsys.exit(3)\n")
    with pytest.raises(AppLaunchError, match="exited with code 3") as failure:
        app.start()
    assert "no such store" in str(failure.value) and not app.running


def test_a_server_that_never_gets_healthy_is_stopped(store, tmp_path):
    app = StandIn(store, tmp_path, script="import time\ntime.sleep(600)\n", startup_timeout=1)
    with pytest.raises(AppLaunchError, match="not healthy"):
        app.start()
    assert not app.running


@pytest.mark.e2e
def test_the_real_admin_app_starts_answers_health_and_stops(tmp_path, clock, settings):
    path = tmp_path / "app.sqlite"
    MemoryService.open(path, settings, clock=clock, embedder=HashingEmbedder()).close()
    with AdminApp(path, embedder="tests.fakes:HashingEmbedder", startup_timeout=180) as app:
        assert answers(app.url)
        with urllib.request.urlopen(app.url, timeout=10) as page:
            assert page.status == 200 and b"<html" in page.read().lower()
        leader = app.process.pid
    assert not app.running and not answers(app.url) and not running(leader)
