"""Rules of the card checked on the tree: no SQL statement and no SQL condition outside
``memory_core/store/``, and no module over 450 lines (``memory_core/``, ``admin_ui/``, ``pages/``).

A SQL statement is a string literal in the code (docstrings and comments are prose, not queries)
holding ``SELECT``, ``INSERT INTO``, ``DELETE FROM`` or ``UPDATE <table> SET``. A SQL condition is a
string literal holding a piece of a WHERE clause (``r.seq = ?``, ``r.id IN (``, ``x IS NULL``,
``ORDER BY created_at``, ``LIMIT ?``): handing ``fetch_records(conn, "r.seq = ?", ...)`` a fragment
is SQL written outside the store as surely as a whole statement is. Other layers call the named
query functions of ``store/`` (and its backends in ``store/pg/``). This replaces the write side's
own check (``test_write_side_sql.py``, issue 28): the same rule, over every package.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("memory_core", "admin_ui", "pages")
STORE = "memory_core/store/"
MAX_LINES = 450
SQL = re.compile(r"\b(SELECT|INSERT INTO|DELETE FROM|UPDATE \w+ SET)\b")
_COLUMN = r"\b[a-z_]\w*(?:\.\w+)?"  # a column, perhaps with its table's alias (r.seq)
WHERE_FRAGMENT = re.compile(
    rf"{_COLUMN}\s*(?:=|!=|<>|<=|>=|<|>)\s*\?"  # a comparison with a parameter
    rf"|{_COLUMN}\s+(?:NOT\s+)?(?:IN|LIKE|GLOB)\s*[(?]"  # a membership or pattern test
    rf"|{_COLUMN}\s+IS\s+(?:NOT\s+)?NULL\b"
    r"|\bORDER BY\s+\w|\bLIMIT\s+\?"
)

def _modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _prose(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings or other bare expression statements."""
    return {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}


def _literals(source: str, pattern: re.Pattern) -> list[tuple[int, str]]:
    """(line, text) of each string literal in ``source`` that ``pattern`` finds something in (an
    f-string's literal parts count; docstrings do not)."""
    tree = ast.parse(source)
    prose = _prose(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            if pattern.search(node.value):
                found.append((node.lineno, node.value))
    return sorted(found)


def sql_literals(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string literal in ``source`` that holds a SQL statement."""
    return _literals(source, SQL)


def where_fragments(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string literal in ``source`` that holds a piece of a WHERE clause."""
    return _literals(source, WHERE_FRAGMENT)


def _outside_store(find) -> dict[str, list[int]]:
    """Module path → lines of what ``find`` reports in it, for every module outside store/."""
    hits: dict[str, list[int]] = {}
    for path in _modules():
        rel = _rel(path)
        if rel.startswith(STORE):
            continue
        lines = [line for line, _ in find(path.read_text(encoding="utf-8"))]
        if lines:
            hits[rel] = lines
    return hits


def sql_outside_store() -> dict[str, list[int]]:
    """Module path → lines of the SQL statements it holds, for every module outside store/."""
    return _outside_store(sql_literals)


def where_fragments_outside_store() -> dict[str, list[int]]:
    """Module path → lines of the WHERE-clause fragments it holds, for every module outside store/."""
    return _outside_store(where_fragments)


def test_the_sql_detector_sees_statements_and_skips_prose():
    source = '''"""A docstring may say SELECT * FROM records."""
def f(store, t):
    """Runs UPDATE records SET x in prose."""
    store.query("SELECT id FROM records WHERE seq = ?", (1,))
    store.query(f"DELETE FROM {t} WHERE id = ?")
    return "INSERT INTO" " log VALUES (?)", "selected records", "UPDATE the SETTINGS"
'''
    assert [line for line, _ in sql_literals(source)] == [4, 5, 6]


def test_no_sql_statement_outside_the_store():
    assert len(_modules()) > 200  # the packages are where this looks: a move must not make it pass vacuously
    hits = sql_outside_store()
    assert not hits, ("SQL outside memory_core/store/ (move it into a named query function there): "
                      + "; ".join(f"{rel} lines {lines}" for rel, lines in sorted(hits.items())))


def test_the_where_detector_sees_conditions_and_skips_prose_and_patterns():
    source = '''"""Finds records WHERE r.seq = ? in prose, which is fine."""
def f(conn, ids, t):
    fetch_records(conn, "r.seq = ?", (1,))
    fetch_records(conn, f"r.id IN ({','.join('?' * len(ids))})", ids)
    fetch_records(conn, "r.subject = ? AND r.status IN ('provisional','confirmed') ORDER BY r.created_at DESC")
    where = "superseded_by IS NULL"
    clause = "LIMIT ?"
    pattern = re.compile(r"^my (?P<attr>[\\w ]+?) (?:is|are)\\s+(?P<obj>.+)")
    return f"<b>{t}</b> = {t}", "rank = 3", "seq in (1, 2)", "sorted BY hand"
'''
    assert [line for line, _ in where_fragments(source)] == [3, 4, 5, 6, 7]


def test_no_where_fragment_outside_the_store():
    assert len(_modules()) > 200
    hits = where_fragments_outside_store()
    assert not hits, ("SQL conditions outside memory_core/store/ (give the query a name in store/ and call it): "
                      + "; ".join(f"{rel} lines {lines}" for rel, lines in sorted(hits.items())))


def test_no_module_over_450_lines():
    long = {_rel(p): n for p in _modules() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them along a seam): {long}"
