"""The built wheel in a fresh virtual environment: what `pip install agent-memory` really gets.

The wheel is built from a copy of exactly the files the build reads (never the checkout in place,
which would leave build/ and *.egg-info behind). A fresh venv gets torch first, as the install
instructions say (the CPU build; docs/dependencies.md explains why torch is needed), then the wheel
with no extras, with requirements.lock as constraints so pip reuses its cache. Then, from a
directory outside the checkout:

- the default path writes and searches with the packaged MiniLM on ONNX Runtime, its ONNX file made
  in this venv on first use (so the declared dependencies are enough to make it), with faiss,
  orjson and lz4 in use, and a second process runs it without importing torch;
- the parts behind extras refuse with the one-line message naming their extra;
- after ``pip install 'agent-memory[app]'`` the admin app's script runs from the installed package
  and ``agent-memory serve`` answers its health endpoint.

These tests fetch packages from the package index (pip's cache and the machine's local wheel mirror
serve what they hold) and take minutes; docs/dependencies.md has the measured times.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TORCH = "torch==2.13.0"  # the Makefile's pin: the CPU build (any other request pulls a CUDA build)
BUILD_INPUTS = ("pyproject.toml", "setup.py", "README.md", "memory_core", "admin_ui", "pages")
EXTRA_PACKAGES = ("streamlit", "plotly", "pandas", "argon2", "FlagEmbedding", "psycopg", "openai", "mcp")

pytestmark = pytest.mark.packaging


def run(command: list, *, timeout: float = 1500, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=timeout, **kwargs)
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def venv_env(home: Path) -> dict[str, str]:
    """The environment of a process in the fresh venv: offline model loading, its own caches, no checkout on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "PYTHON"))}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               XDG_CACHE_HOME=str(home / "cache"), HOME=str(home))
    env["PIP_CACHE_DIR"] = os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))  # the shared, warm cache
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in BUILD_INPUTS:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, symlinks=False, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, source / name)
    dist = tmp_path_factory.mktemp("dist")
    # With build isolation, as any install builds it: pip brings the setuptools pyproject.toml asks for.
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", dist, source])
    (built,) = dist.glob("agent_memory-*.whl")
    return built


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory, wheel):
    home = tmp_path_factory.mktemp("home")
    venv = home / "venv"
    run([sys.executable, "-m", "venv", venv])
    python = venv / "bin" / "python"
    env = venv_env(home)
    # --no-compile: byte-compiling torch and the rest on install is most of the time; imports compile what they use
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile"]
    run([*pip, TORCH], env=env, cwd=home)
    run([*pip, wheel, "-c", ROOT / "requirements.lock"], env=env, cwd=home)
    yield {"home": home, "venv": venv, "python": python, "env": env, "pip": pip}
    # About 2 GB (torch), not worth keeping among pytest's last three temp dirs; deleting it took up to two
    # minutes on a loaded machine, so it happens in a process of its own that the run does not wait for.
    subprocess.Popen(["rm", "-rf", str(home)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def probe(venv: dict) -> dict:
    done = run([venv["python"], ROOT / "tests" / "packaging" / "default_path_probe.py"], env=venv["env"], cwd=venv["home"],
               timeout=600)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_wheel_carries_the_library_the_app_and_its_pages(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "memory_core/cli.py" in names and "memory_core/llm/openai_client.py" in names
    assert {"admin_ui/entry/app.py", "admin_ui/entry/page_script.py", "admin_ui/static/favicon.png"} <= names
    # the top-level pages/ is installed as admin_ui/pages/, never beside the entry scripts nor at the top
    pages = {Path(n).name for n in names if n.startswith("admin_ui/pages/")}
    assert pages == {p.name for p in (ROOT / "pages").glob("*.py")}
    assert not any(n.startswith(("tests/", "benchmarks/", "pages/", "admin_ui/entry/pages/")) for n in names)
    seeds = {n.removeprefix("memory_core/seed_data/") for n in names if n.startswith("memory_core/seed_data/")}
    assert seeds == {str(p.relative_to(ROOT / "seed_data")) for p in (ROOT / "seed_data").rglob("*") if p.is_file()}


def test_a_default_install_finds_its_seed_data_inside_the_package(fresh_venv):
    code = ("import json, memory_core; from memory_core.demo_seed import load_seed; "
            "from memory_core.hostmem.bundle import default_bundle_path; from memory_core.eval.scenarios import load_scenarios; "
            "print(json.dumps({'bundle': str(default_bundle_path()), 'exists': default_bundle_path().is_file(), "
            "'sessions': len(load_seed().sessions), 'scenarios': len(load_scenarios())}))")
    done = run([fresh_venv["python"], "-c", code], env=fresh_venv["env"], cwd=fresh_venv["home"])
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["bundle"].startswith(str(fresh_venv["venv"])) and found["exists"]
    assert found["sessions"] == len(list((ROOT / "seed_data" / "sessions").glob("*"))) and found["scenarios"] > 0


def test_a_default_install_writes_and_searches_on_the_fast_path(fresh_venv):
    first = probe(fresh_venv)
    assert first["memory_core"].startswith(str(fresh_venv["venv"]))  # the installed package, not the checkout
    assert first["written"] and first["found"] == ["The user prefers green tea in the morning."]
    assert first["runtime"] == "onnxruntime"  # the ONNX file was made here: onnx and torch's exporter are installed
    assert first["model"][0] == "sentence-transformers/all-MiniLM-L6-v2"
    assert first["ann"] and first["orjson"] and first["lz4"] and first["trace_codec"] == "L4"
    assert first["importable"] == dict.fromkeys(EXTRA_PACKAGES, False)  # no extra came with the default install
    cache = list((fresh_venv["home"] / "cache" / "agent-memory" / "onnx").glob("*.onnx"))
    assert len(cache) == 1
    second = probe(fresh_venv)  # with the ONNX file cached, the default path never imports torch
    assert second["runtime"] == "onnxruntime" and not second["torch_imported"]
    assert second["found"] == first["found"]


def test_a_default_install_names_the_extra_each_optional_part_needs(fresh_venv, tmp_path):
    agent_memory = fresh_venv["venv"] / "bin" / "agent-memory"
    store = tmp_path / "s.sqlite"
    done = subprocess.run([agent_memory, "serve", "--path", store], env=fresh_venv["env"], cwd=fresh_venv["home"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and not store.exists()
    assert done.stderr.strip().splitlines()[-1].endswith("pip install 'agent-memory[app]'")
    code = "import memory_core.notebook"
    done = subprocess.run([fresh_venv["python"], "-c", code], env=fresh_venv["env"], cwd=fresh_venv["home"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and done.stderr.strip().splitlines()[-1].endswith("pip install 'agent-memory[app]'")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def test_the_app_extra_installs_the_admin_app_and_serve_answers_its_health_check(fresh_venv, wheel, tmp_path):
    env, home = fresh_venv["env"], fresh_venv["home"]
    run([*fresh_venv["pip"], f"{wheel}[app]", "-c", ROOT / "requirements.lock"], env=env, cwd=home)
    # The page script (admin_ui/entry/page_script.py; app.py beside it is its server), a page and the admin_ui logic
    # run from the installed package: the sign-in page for a visitor, the overview page for a signed-in admin (over a
    # store the app creates with the default embedder).
    script = ("import json, pathlib; from streamlit.testing.v1 import AppTest; import admin_ui; "
              "from admin_ui.auth import Identity; "
              "app = pathlib.Path(admin_ui.__file__).parent / 'entry' / 'page_script.py'; "
              "overview = pathlib.Path(admin_ui.__file__).parent / 'pages' / 'overview.py'; "
              "visitor = AppTest.from_file(str(app), default_timeout=120).run(); "
              "admin = AppTest.from_file(str(app), default_timeout=120); admin.session_state['identity'] = Identity('ada', 'admin'); "
              "admin.run(); admin.switch_page(str(overview)).run(); "
              "print(json.dumps({'app': str(app), 'exceptions': [str(e.value) for e in [*visitor.exception, *admin.exception]], "
              "'visitor': [t.value for t in visitor.title], 'admin': [t.value for t in admin.title]}))")
    done = run([fresh_venv["python"], "-c", script], env={**env, "MEMORY_STORE": str(tmp_path / "app.sqlite")}, cwd=home,
               timeout=600)
    shown = json.loads(done.stdout.strip().splitlines()[-1])
    assert shown["app"].startswith(str(fresh_venv["venv"])) and shown["exceptions"] == [], done.stdout + done.stderr
    assert shown["visitor"] == ["Sign in to agent-memory"] and shown["admin"][:1] == ["Overview"], shown
    # `agent-memory serve` from outside the checkout: the server comes up and answers /_stcore/health.
    port = free_port()
    log = open(tmp_path / "serve.log", "w")
    server = subprocess.Popen([fresh_venv["venv"] / "bin" / "agent-memory", "serve", "--path", tmp_path / "served.sqlite",
                               "--port", str(port)], env=env, cwd=home, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while not healthy(f"http://127.0.0.1:{port}/_stcore/health"):
            assert server.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            time.sleep(0.3)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as page:
            assert "<title>" in page.read().decode()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
        log.close()
    assert "agent-memory admin app: http://localhost:" in (tmp_path / "serve.log").read_text()
