"""The offline examples run end to end (each where its framework is installed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import framework_params

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = {"deepagents": "deepagents_assistant.py", "crewai": "crewai_crew.py"}


@pytest.mark.parametrize("framework", framework_params())
def test_the_offline_example_remembers_across_conversations(framework, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("ANTHROPIC_API_KEY", None)
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / SCRIPTS[framework]), "--embedder", "hashing", "--store", str(tmp_path / "m.sqlite")],
        capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "[semantic/confirmed/user_statement] The user wants short answers." in out
    assert "[semantic/confirmed/user_statement] The user's timezone is CET." in out
    assert out.count("extraction run") == 2 and "assistant: 10:00 CET." in out
