"""A part whose extra is not installed says, in one line, which extra to install.

Each case runs in a fresh interpreter where the missing package is made unimportable the way
Python marks a module that is not there (``sys.modules[name] = None``), then drives the real entry
point: the CLI, the notebook package and its displays, the app launcher, the admin app's package.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from memory_core.extras import EXTRAS

ROOT = Path(__file__).resolve().parents[2]


def run_without(missing: list[str], code: str, *, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    prelude = f"import sys\nfor _name in {missing!r}:\n    sys.modules[_name] = None\n"
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=300)


def cli_without(missing: list[str], *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_without(missing, f"from memory_core.cli import main\nsys.exit(main({list(argv)!r}))", env=env)


def one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip() and "Warning" not in line]
    assert len(lines) == 1, done.stderr  # one line, no traceback
    return lines[0]


def test_serve_without_the_app_extra_names_it_and_creates_nothing(tmp_path):
    store = tmp_path / "s.sqlite"
    line = one_line_error(cli_without(["streamlit"], "serve", "--path", str(store)))
    assert line == ("error [missing_extra]: the admin app cannot run without streamlit, which is not installed: "
                    "pip install 'agent-memory[app]'")
    assert not store.exists()


def test_a_postgresql_store_without_the_postgres_extra_names_it():
    line = one_line_error(cli_without(["psycopg"], "stats", "--path", "postgresql://nobody@127.0.0.1:9/none"))
    assert line.startswith("error [missing_extra]: a postgresql:// store cannot run without psycopg")
    assert line.endswith("pip install 'agent-memory[postgres]'")


def test_the_openai_compatible_provider_without_the_openai_extra_names_it(tmp_path):
    env = {"MEMORY_EXTRACTION__EXTRACTOR": "openai_compatible", "MEMORY_OPENAI_COMPATIBLE__BASE_URL": "http://127.0.0.1:9/v1",
           "MEMORY_OPENAI_COMPATIBLE__MODEL": "m"}
    line = one_line_error(cli_without(["openai"], "stats", "--path", str(tmp_path / "s.sqlite"), env=env))
    assert line.endswith("the openai_compatible model provider cannot run without openai, which is not installed: "
                         "pip install 'agent-memory[openai]'")
    assert not (tmp_path / "s.sqlite").exists()


def test_the_bge_embedder_without_the_bge_extra_names_it(tmp_path):
    env = {"MEMORY_EMBEDDER__KIND": "bge-m3", "MEMORY_EMBEDDER__MODEL_PATH": str(tmp_path)}
    line = one_line_error(cli_without(["FlagEmbedding"], "init", "--path", str(tmp_path / "s.sqlite"), env=env))
    assert line.startswith("error [embedder_unavailable]: the bge-m3 embedder cannot run without FlagEmbedding")
    assert line.endswith("pip install 'agent-memory[bge]'")


@pytest.mark.parametrize("missing", ["pandas", "plotly"])
def test_the_notebook_helpers_without_the_app_extra_name_it(missing):
    done = run_without([missing], """
        try:
            import memory_core.notebook
        except Exception as exc:
            print(type(exc).__name__, exc)
    """)
    assert done.stdout.strip() == (f"MissingExtraError the notebook helpers (displays, DataFrames, charts) cannot run "
                                   f"without {missing}, which is not installed: pip install 'agent-memory[app]'")


def test_displays_fall_back_to_text_and_to_dataframe_names_the_extra(tmp_path):
    done = run_without(["pandas"], f"""
        import warnings
        from memory_core import MemoryService
        from memory_core.embed.hashing import HashingEmbedder
        from memory_core.settings import default_settings
        with MemoryService.open({str(tmp_path / 'n.sqlite')!r}, default_settings(), embedder=HashingEmbedder(32)) as svc:
            svc.grant("a", "user:u", read=True, write=True, actor="t")
            response = svc.search(agent_id="a", user_id="u", query="<b>tea</b>")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                html = response._repr_html_()
            print("HTML", "<b>tea</b>" not in html, any("agent-memory[app]" in str(w.message) for w in caught))
            try:
                response.to_dataframe()
            except Exception as exc:
                print(type(exc).__name__, exc)
    """)
    assert "HTML True True" in done.stdout, done.stdout + done.stderr
    assert "MissingExtraError the notebook helpers (displays, DataFrames, charts) cannot run without pandas" in done.stdout


def test_launching_the_app_from_a_notebook_without_streamlit_names_the_extra(tmp_path):
    done = run_without(["streamlit"], f"""
        from memory_core.notebook import launch_app
        try:
            launch_app({str(tmp_path / 'n.sqlite')!r})
        except Exception as exc:
            print(type(exc).__name__, exc)
    """)
    assert done.stdout.strip() == ("MissingExtraError the admin app cannot run without streamlit, which is not installed: "
                                   "pip install 'agent-memory[app]'"), done.stderr


def test_the_admin_app_package_without_plotly_names_the_extra():
    done = run_without(["plotly", "argon2"], """
        try:
            import admin_ui.views.navigation
        except Exception as exc:
            print(type(exc).__name__, exc)
    """)
    assert done.stdout.strip() == ("MissingExtraError the admin app cannot run without plotly, argon2, which is not "
                                   "installed: pip install 'agent-memory[app]'"), done.stderr


def test_every_extra_in_pyproject_is_known_to_the_guards():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(declared) == set(EXTRAS)
    app = {requirement.split(">")[0].split("=")[0].split("[")[0] for requirement in declared["app"]}
    assert app == {"streamlit", "plotly", "pandas", "argon2-cffi"}


def test_a_missing_extra_still_reads_as_a_missing_module():
    """Callers that treat an absent optional part as absent (``except ImportError``, importorskip) keep working:
    the CrewAI venv's suite skips its admin-app check this way."""
    done = run_without(["streamlit"], """
        import pytest
        try:
            pytest.importorskip("admin_ui.views.navigation", reason="no app here")
        except BaseException as exc:
            print(type(exc).__name__, exc)
    """)
    assert done.stdout.strip() == "Skipped no app here", done.stdout + done.stderr
