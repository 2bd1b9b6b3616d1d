"""The FTS5 query builder against arbitrary text: it never raises, never lets operator syntax
through, and always means "records containing any of the query's words"."""

import re
import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core.store.fulltext_queries import fts_match_expression
from memory_core.text import STOP_WORDS, query_mentions, query_terms


def build_fts_query(text: str, max_terms: int = 16) -> str | None:
    """The MATCH expression the lexical search's terms of ``text`` make (each a quoted phrase)."""
    return fts_match_expression(query_terms(text, max_terms))

_PHRASE = re.compile(r'^"[^"]+"$')

WORDS = ["sushi", "atlas", "priya", "migration", "near", "and", "or", "not", "deploy", "friday", "rust", "lisbon"]
DOCS = [
    "priya leads the atlas migration",
    "the user likes sushi on friday",
    "deploy rust services near lisbon",
    "not and or near",
    "atlas deploy friday",
    "nothing relevant here",
]
OPERATOR_BITS = ['"', "*", "^", "-", "+", "(", ")", ":", "NEAR(", "AND", "OR", "NOT", "content:", "{", "}", "'", ",", "NEAR/2"]


def _fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(content, subject, aliases, tokenize = 'unicode61 remove_diacritics 2')")
    for i, doc in enumerate(DOCS, start=1):
        conn.execute("INSERT INTO f (rowid, content, subject, aliases) VALUES (?, ?, '', '')", (i, doc))
    return conn


CONN = _fts()


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_arbitrary_text_never_raises_and_is_only_quoted_terms(text):
    expression = build_fts_query(text)
    if expression is None:
        assert query_terms(text) == []
        return
    for part in expression.split(" OR "):
        assert _PHRASE.match(part), part
    CONN.execute("SELECT rowid, bm25(f) FROM f WHERE f MATCH ?", (expression,)).fetchall()


@settings(max_examples=300)
@given(st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(OPERATOR_BITS)), max_size=12).map(" ".join))
def test_operator_syntax_never_changes_which_records_match(text):
    """Matches are exactly the documents holding at least one non-stop query word."""
    expression = build_fts_query(text)
    words = {w.casefold() for w in re.findall(r"[^\W_]+", text)} - STOP_WORDS
    expected = {i for i, doc in enumerate(DOCS, start=1) if words & set(doc.split())}
    if expression is None:
        assert not words
        return
    found = {row[0] for row in CONN.execute("SELECT rowid FROM f WHERE f MATCH ?", (expression,))}
    # A chunk joined by operator symbols (e.g. "atlas-deploy") is searched as a phrase, so it can
    # only narrow a match, never widen it.
    assert found <= expected
    if not re.search(r"[^\W_][-_./:#@+][^\W_]", text):
        assert found == expected


@given(st.text(max_size=200))
def test_mentions_never_raise_and_are_normalised(text):
    for key in query_mentions(text):
        assert key == key.strip() and key == key.casefold()
        assert "  " not in key


def test_examples():
    assert build_fts_query('what did "Priya" say NEAR(atlas migration)*') == '"priya" OR "say" OR "near" OR "atlas" OR "migration"'
    assert build_fts_query("status of PR-1234 in v2.3.1") == '"status" OR "pr 1234" OR "v2 3 1"'
    assert build_fts_query("what is it?") is None
    assert build_fts_query('content:secret -x "unbalanced') == '"content secret" OR "x" OR "unbalanced"'
    assert query_mentions("What did Priya's team decide about Acme Corp?", 2)[:3] == ["priya", "team", "decide"]
    assert "acme corp" in query_mentions("What did Priya's team decide about Acme Corp?", 2)
