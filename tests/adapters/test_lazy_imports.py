"""memory_core and its framework-neutral adapter parts import without any agent framework; the
framework modules say which extra is missing."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent("""
    import sys
    for name in ("langchain", "langchain_core", "langgraph", "deepagents", "crewai"):
        sys.modules[name] = None          # any import of it now fails
    import memory_core, memory_core.adapters
    from memory_core.adapters import memory_policy
    assert memory_policy("auto")
    from memory_core.errors import FrameworkUnavailableError
    for module, extra in (("memory_core.adapters.deepagents", "deepagents"), ("memory_core.adapters.crewai", "crewai")):
        try:
            __import__(module)
        except FrameworkUnavailableError as exc:
            assert f"agent-memory[{extra}]" in exc.message, exc.message
        else:
            raise AssertionError(module + " imported without its framework")
    print("ok")
""")


def test_the_library_imports_without_frameworks():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
