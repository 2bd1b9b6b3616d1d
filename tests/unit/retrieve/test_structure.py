"""The retrieval package's shape: no SQL outside the store, small modules, one home for text rules."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3] / "memory_core"
AREA = sorted([*(ROOT / "retrieve").rglob("*.py"), *(ROOT / "text").rglob("*.py"),
               *(ROOT / "store" / n for n in ("search_queries.py", "fulltext_queries.py", "search_log_queries.py"))])
SQL = re.compile(r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+(OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b|"
                 r"\b(AND|OR|WHERE|IN)\s*\(?\s*\?|\bMATCH\s+\?", re.IGNORECASE)


def _string_literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            out.append((node.lineno, "".join(v.value for v in node.values if isinstance(v, ast.Constant))))
    return out


@pytest.mark.parametrize("path", [p for p in AREA if "store" not in p.parts], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_sql_outside_the_store(path):
    found = [(line, text) for line, text in _string_literals(path) if SQL.search(text)]
    assert not found, f"SQL in {path.relative_to(ROOT)} (move it to a named query in memory_core/store/): {found}"


def test_the_sql_check_sees_sql():
    assert SQL.search("SELECT seq FROM records WHERE status = ?") and SQL.search("r.seq IN (?,?)")
    assert not SQL.search("select the records that match") and not SQL.search("a WHERE fragment")


@pytest.mark.parametrize("path", AREA, ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_stay_under_450_lines(path):
    assert len(path.read_text().splitlines()) <= 450


def test_text_rules_have_one_home():
    """No module outside memory_core/text defines its own copy of a shared word rule or list."""
    copies = re.compile(r"^(NEGATORS|STOP_WORDS|FRAMING|SHAPING_WORDS|_CALENDAR|_QUESTION_WORDS)\s*=\s*frozenset|"
                        r"^def (fold|stem|text_stems|terms)\(|^_?(WORD|TOKEN)\s*=\s*re\.compile", re.MULTILINE)
    offenders = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
                 if "text" not in p.relative_to(ROOT).parts and copies.search(p.read_text())]
    assert offenders == []
