"""No SQL statement in the write side: ``ingest/``, ``extract/``, ``policy/``, ``hostmem/`` and
``maintenance.py`` call the named query functions of ``memory_core/store/`` (issue 28).

A SQL statement is a string literal in the code (docstrings are prose, not queries) holding
``SELECT``, ``INSERT INTO``, ``DELETE FROM`` or ``UPDATE <table> SET``; an f-string's literal parts
count. (A repository-wide version of this check may replace this one; the paths are the same.)
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WRITE_SIDE = ("memory_core/ingest", "memory_core/extract", "memory_core/policy", "memory_core/hostmem", "memory_core/maintenance.py")
SQL = re.compile(r"\b(SELECT|INSERT INTO|DELETE FROM|UPDATE \w+ SET)\b")


def sql_lines(source: str) -> list[int]:
    """Lines of the string literals in ``source`` that hold a SQL statement (not docstrings)."""
    tree = ast.parse(source)
    prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return sorted(node.lineno for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose and SQL.search(node.value))


def _modules() -> list[Path]:
    out: list[Path] = []
    for rel in WRITE_SIDE:
        path = ROOT / rel
        out.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return out


def test_the_detector_sees_statements_and_skips_prose():
    source = '''"""A docstring may say SELECT * FROM records."""
def f(conn, t):
    """Runs UPDATE records SET x, in prose."""
    conn.execute("SELECT id FROM records WHERE seq = ?", (1,))
    conn.execute(f"DELETE FROM {t} WHERE id = ?")
    return "INSERT INTO" " log VALUES (?)", "selected records", "UPDATE the SETTINGS"
'''
    assert sql_lines(source) == [4, 5, 6]


def test_the_write_side_holds_no_sql():
    modules = _modules()
    assert len(modules) > 20  # the paths exist: a renamed package must not make this pass vacuously
    hits = {path.relative_to(ROOT).as_posix(): lines for path in modules if (lines := sql_lines(path.read_text(encoding="utf-8")))}
    assert not hits, "SQL outside memory_core/store/ (move it into a named query function there): " + "; ".join(
        f"{rel} lines {lines}" for rel, lines in sorted(hits.items()))
