"""The admin app's layout rules (docs/admin-app.md, "Code layout"), checked on the source.

The import rules (views above data above auth; no store import) are import-linter contracts in
pyproject.toml, run by tests/unit/test_layers.py. These are the rules an import graph cannot see:
no SQL anywhere in the app, views and pages reaching the service only through ``admin_ui.data``,
small modules, and no ``pages/`` folder where Streamlit would take it for an old-style multipage app.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from admin_ui.views.navigation import PAGES, PAGES_DIR

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "admin_ui"
PAGE_FILES = sorted((ROOT / "pages").glob("*.py"))
SOURCES = sorted(PACKAGE.rglob("*.py"))
SQL = re.compile(r"\bSELECT\b[\s\S]{0,200}?\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b|"
                 r"\bCREATE\s+(TABLE|INDEX)\b|\bPRAGMA\b")
STORE_CALLS = {"execute", "executemany", "query", "query_one", "scalar", "transaction"}


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_app_has_no_sql_and_never_touches_the_store():
    offenders = []
    for path in [*SOURCES, *PAGE_FILES]:
        text = path.read_text()
        if SQL.search(text):
            offenders.append(f"{_relative(path)}: SQL")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and (node.attr == "conn" or (
                    node.attr == "store" and isinstance(node.value, ast.Name) and node.value.id == "service")):
                offenders.append(f"{_relative(path)}:{node.lineno} .{node.attr}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STORE_CALLS:
                offenders.append(f"{_relative(path)}:{node.lineno} .{node.func.attr}()")
    assert PAGE_FILES and len(SOURCES) > 30
    assert offenders == []


def test_views_and_pages_reach_the_service_only_through_the_data_layer():
    # A view or page hands `service` to an admin_ui.data function; it never calls or reads it itself.
    offenders = []
    for path in [*sorted((PACKAGE / "views").glob("*.py")), *PAGE_FILES]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "service":
                offenders.append(f"{_relative(path)}:{node.lineno} service.{node.attr}")
    assert offenders == []


def test_pages_import_the_app_and_nothing_of_the_library_but_charts_and_errors():
    allowed = {"memory_core.charts", "memory_core.errors"}
    offenders = []
    for path in PAGE_FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "memory_core":
                names = {f"{node.module}.{a.name}" if node.module == "memory_core" else node.module for a in node.names}
                offenders += sorted(f"{path.name}: {name}" for name in names - allowed)
            elif isinstance(node, ast.Import):
                offenders += [f"{path.name}: {a.name}" for a in node.names if a.name.split(".")[0] == "memory_core"]
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                offenders += [f"{path.name}: {m}" for m in modules
                              if m.split(".")[0] not in ("streamlit", "admin_ui", "memory_core")]
    assert offenders == []


def test_no_module_of_the_app_passes_450_lines():
    sizes = {_relative(p): len(p.read_text().splitlines()) for p in [*SOURCES, *PAGE_FILES]}
    assert {path: n for path, n in sizes.items() if n > 450} == {}


def test_no_pages_folder_sits_beside_a_script_streamlit_runs():
    # Streamlit takes a pages/ folder beside its main script for an old-style multipage app (every
    # page in the menu, runnable before sign-in); the entry scripts have a folder of their own.
    entry = PACKAGE / "entry"
    assert sorted(p.name for p in entry.iterdir() if p.name != "__pycache__") == ["__init__.py", "app.py", "page_script.py"]
    assert not (entry / "pages").exists()
    assert PAGES_DIR == ROOT / "pages"


def test_the_menu_and_the_pages_folder_name_the_same_pages():
    assert sorted(file for file, *_ in PAGES) == [p.name for p in PAGE_FILES]
