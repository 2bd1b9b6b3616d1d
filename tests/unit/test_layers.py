"""The import layers of docs/architecture.md, checked on every test run.

``lint-imports`` reads the contracts in pyproject.toml ([tool.importlinter]); an import that points
up a layer, into the admin app or streamlit, or closes a cycle fails here with import-linter's
explanation of the offending chain.
"""

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_hold():
    config = str(ROOT / "pyproject.toml")
    linter = Path(sys.executable).with_name("lint-imports")
    if linter.exists():
        command = [str(linter), "--no-cache", "--config", config]
    else:  # the same check through import-linter's Python API when the script is not on disk
        command = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
                   f"sys.exit(lint_imports(config_filename={config!r}, no_cache=True))"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def _strongly_connected(graph: grimp.ImportGraph, modules: set[str]) -> list[set[str]]:
    """Tarjan's algorithm over the module import graph; components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = [0]

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start) & modules)))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child) & modules))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_of_memory_core_is_part_of_an_import_cycle():
    # Stricter than the package-level contract: module by module, TYPE_CHECKING imports included.
    graph = grimp.build_graph("memory_core", cache_dir=None)
    modules = {m for m in graph.modules if m.startswith("memory_core.")}
    assert _strongly_connected(graph, modules) == []


def test_importing_the_library_loads_neither_streamlit_nor_the_admin_app():
    code = ("import sys, memory_core, memory_core.notebook, memory_core.cli, memory_core.eval.calibrate_cli; "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('streamlit', 'admin_ui', 'pages')); "
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_modules_stay_small():
    # docs/architecture.md: aim under ~400 lines, split before ~600 (house style).
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines()) for p in (ROOT / "memory_core").rglob("*.py")}
    assert {path: n for path, n in sizes.items() if n > 600} == {}
