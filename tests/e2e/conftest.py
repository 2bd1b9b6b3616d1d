"""Playwright fixtures: one demo store built per test session, one real `streamlit run` per module.

Chromium comes from Debian (/usr/bin/chromium); Playwright's own browser download is never used. The server
runs exactly as `agent-memory serve --demo` would start it (headless, bound to 127.0.0.1, demo
accounts, demo mode), on a free port, with its output in a temporary log file.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from memory_core.app_launch import DEMO_ACCOUNTS, RUN_FROM, app_environment, streamlit_command

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    """A demo store built once from seed_data/ with the real packaged model (copied per module).

    ``E2E_DEMO_STORE`` may name an already built demo store to reuse while iterating locally.
    """
    path = tmp_path_factory.mktemp("demo") / "demo.sqlite"
    prebuilt = os.environ.get("E2E_DEMO_STORE")
    if prebuilt and Path(prebuilt).is_file():
        shutil.copy(prebuilt, path)
        return path
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    subprocess.run([sys.executable, "-m", "memory_core.cli", "seed-demo", "--path", str(path)], cwd=ROOT, env=env,
                   check=True, timeout=600, capture_output=True)
    return path


def start_server(template: Path, workdir: Path, demo: bool = True, tls: tuple[Path, Path] | None = None):
    """Start ``streamlit run`` over a fresh copy of ``template``; returns (process, base_url, store, log file).

    ``tls`` = (certificate, key) serves it over HTTPS, as Streamlit's ``server.sslCertFile`` does.
    """
    store = workdir / "demo.sqlite"
    shutil.copy(template, store)
    port = free_port()
    env = app_environment(store, demo=demo)
    env["MEMORY_UI__ACCOUNTS_FILE"] = str(DEMO_ACCOUNTS)
    if not demo:
        env.pop("MEMORY_UI__DEMO_MODE", None)
    log = open(workdir / "server.log", "w")
    command = streamlit_command(port, "127.0.0.1")
    if tls is not None:
        command += ["--server.sslCertFile", str(tls[0]), "--server.sslKeyFile", str(tls[1])]
    proc = subprocess.Popen(command, cwd=RUN_FROM, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    unverified = ssl._create_unverified_context() if tls else None  # our own self-signed test certificate
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2, context=unverified) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"streamlit did not start: {(workdir / 'server.log').read_text()[-2000:]}")
        time.sleep(0.5)
    return proc, base, store, log


def stop_server(proc, log) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def app_server(demo_template, tmp_path_factory):
    """``(base_url, store_path)`` of a real app server in demo mode over a fresh copy of the demo store."""
    proc, base, store, log = start_server(demo_template, tmp_path_factory.mktemp("server"), demo=True)
    yield base, store
    stop_server(proc, log)


@pytest.fixture(scope="module")
def plain_server(demo_template, tmp_path_factory):
    """The same without demo mode: nobody is signed in automatically (as on a shared server)."""
    proc, base, store, log = start_server(demo_template, tmp_path_factory.mktemp("plain"), demo=False)
    yield base, store
    stop_server(proc, log)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import expect, sync_playwright

    # Waiting on expected text is how journeys synchronise; the first run of a server also loads
    # the embedding model, so allow more than Playwright's 5 s default.
    expect.set_options(timeout=45_000)

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, request):
    """A fresh browser session; its end state is saved to test-artifacts/<test>.png."""
    context = browser.new_context(viewport={"width": 1440, "height": 1400})
    context.set_default_timeout(60_000)
    page = context.new_page()
    yield page
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    finally:
        context.close()
