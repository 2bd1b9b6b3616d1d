"""Full-text postings on PostgreSQL: a ``tsvector`` per record, written from Python-made tokens.

The lexical generator (``retrieve/generate/lexical_score.py``) needs one thing from a full-text index: for a
query term, the ascending list of record seqs holding it (its doclist). It then computes its own
score from the *readable* records' postings, on both backends, so neither FTS5's ``bm25()`` nor
PostgreSQL's ``ts_rank`` decides any ranking (docs/retrieval.md, "Lexical search on PostgreSQL").

Tokens are made here, not by PostgreSQL's parser, because the parser depends on the server's
locale (under the C locale non-ASCII letters are not word characters) and recognises e-mail
addresses, URLs and hyphenated words as single tokens where FTS5's ``unicode61`` splits them. The
rule is unicode61's and lives in :mod:`memory_core.text` (``words``, ``index_fold``): a token is a
run of letters and digits; everything else separates; letters are case-folded and stripped of
diacritics (``remove_diacritics 2``). The tokens are stored as a ``tsvector`` literal with
positions (content, then subject words, then aliases, each column starting 1,000 positions after
the previous one's last so a phrase never spans two columns), which makes a phrase term such as
``"pr 1234"`` a ``'pr' <-> '1234'`` query, as FTS5 matches it.
"""

from __future__ import annotations

import numpy as np

from ...text import index_fold, words

MAX_POSITION = 16_383  # tsvector positions stop here (later tokens still match, phrases may not)
COLUMN_GAP = 1_000
MAX_LEXEME_BYTES = 2_000  # PostgreSQL refuses lexemes from 2 KB; such a "word" is not searchable


def tokens(text: str) -> list[str]:
    """The folded tokens of ``text`` in order (``text.words``, each ``text.index_fold``-ed)."""
    out = []
    for raw in words(text):
        token = index_fold(raw)
        if token and len(token.encode()) <= MAX_LEXEME_BYTES:
            out.append(token)
    return out


def tsvector_literal(*columns: str) -> str:
    """A ``tsvector`` input string for the columns' tokens, with positions (see the module docstring)."""
    positions: dict[str, list[int]] = {}
    at = 0
    for column in columns:
        start = at
        for token in tokens(column):
            at += 1
            positions.setdefault(token, []).append(min(at, MAX_POSITION))
        at = max(at, start) + COLUMN_GAP
    return " ".join(f"'{lexeme}':{','.join(str(p) for p in sorted(set(ps))[:256])}" for lexeme, ps in positions.items())


def tsquery_literal(term: str) -> str | None:
    """A query term (one word, or the space-separated parts of an identifier) as a ``tsquery``."""
    parts = tokens(term)
    if not parts:
        return None
    return " <-> ".join(f"'{part}'" for part in parts)


# What records.fts_text_for reads in four statements, in one: the record, its subject entity's
# name and its linked entities' aliases (own scope only), its procedure's name and trigger.
_TEXT_OF = (
    "SELECT r.status, r.content, r.attribute, "
    "(SELECT e.canonical_name FROM entities e WHERE e.id = r.subject_entity_id AND e.scope_kind = r.scope_kind "
    "AND e.scope_id = r.scope_id), "
    "(SELECT string_agg(x.alias, ' ' ORDER BY x.alias) FROM (SELECT DISTINCT a.alias FROM record_entities re "
    "JOIN entity_aliases a ON a.entity_id = re.entity_id JOIN entities e ON e.id = re.entity_id "
    "WHERE re.record_id = r.id AND e.scope_kind = r.scope_kind AND e.scope_id = r.scope_id) x), "
    "(SELECT p.name || '. ' || p.trigger FROM procedures p WHERE p.record_id = r.id LIMIT 1) "
    "FROM records r WHERE r.seq = %s"
)

_SEQ_AND_TEXT_OF_ID = _TEXT_OF.replace("SELECT r.status,", "SELECT r.seq, r.status,", 1).replace("WHERE r.seq = %s", "WHERE r.id = %s")


def text_of(conn, record_seq: int) -> tuple[str, str, str] | None:
    """(content, subject text, alias text) of a record as its full-text row holds them, in one round
    trip (the same values as ``records.fts_text_for``); None for a deleted or missing record."""
    return _text(conn.execute_native(_TEXT_OF, (record_seq,)).fetchone())


def seq_and_text_of(conn, record_id: str) -> tuple[int, tuple[str, str, str] | None]:
    """The seq of the record with id ``record_id`` and its :func:`text_of`, read by id in one
    statement (for a record whose queued insert travels with this read)."""
    row = conn.execute_native(_SEQ_AND_TEXT_OF_ID, (record_id,)).fetchone()
    if row is None:
        raise LookupError(f"record {record_id} was not inserted")
    return int(row[0]), _text(row[1:])


def _text(row) -> tuple[str, str, str] | None:
    if row is None or row[0] == "deleted":
        return None
    status, content, attribute, subject_name, aliases, procedure = row
    subject_words = [w for w in (subject_name, attribute.replace("_", " ") if attribute else None) if w]
    return (procedure if procedure is not None else content), " ".join(subject_words), aliases or ""


def replace_row(conn, record_seq: int, text: tuple[str, str, str] | None) -> None:
    """Make the full-text row of ``record_seq`` hold ``text`` (content, subject, aliases), or none.
    Inside a transaction the statement is deferred (nothing reads its result): it travels with the
    transaction's next statement, or its COMMIT, in one round trip."""
    if text is None:
        conn.defer("DELETE FROM records_fts WHERE rowid = %s", (record_seq,), native=True)
        return
    conn.defer("INSERT INTO records_fts (rowid, lexemes) VALUES (%s, %s::tsvector) "
               "ON CONFLICT (rowid) DO UPDATE SET lexemes = EXCLUDED.lexemes", (record_seq, tsvector_literal(*text)), native=True)


def doclist(conn, term: str) -> np.ndarray:
    """Ascending seqs of the records holding ``term`` (every record, readable or not)."""
    query = tsquery_literal(term)
    if query is None:
        return np.zeros(0, dtype=np.int64)
    row = conn.execute_native("SELECT string_agg(rowid::text, ',' ORDER BY rowid) FROM records_fts WHERE lexemes @@ %s::tsquery",
                              (query,)).fetchone()
    return np.fromstring(row[0], dtype=np.int64, sep=",") if row and row[0] else np.zeros(0, dtype=np.int64)


def readable_doclists(conn, terms: list[str], where: str, params, cap: int | None) -> dict[str, np.ndarray]:
    """Per term, ascending seqs of the records holding it that pass the hard filter ``where`` (over
    ``records AS r``), at most ``cap + 1`` of them; all terms in one statement.

    The filter is checked in SQL instead of reading every readable seq first: the GIN index gives a
    term's rows, each is checked against its ``records`` row, and counting stops at ``cap + 1``
    (past the bound the lexical generator leaves the term out whatever its count), so a term's cost
    is bounded by the bound, not by the size of the store or of the readable set.
    """
    out = {term: np.zeros(0, dtype=np.int64) for term in terms}
    queries = [(term, tsquery_literal(term)) for term in terms]
    asked = [(term, query) for term, query in queries if query is not None]
    if not asked:
        return out
    limit = "" if cap is None else " LIMIT ?"
    # The filter is a scalar subquery per posting, not a join: a join lets the planner (which has no
    # statistics on the lexemes) hash all of a common term's postings, 630K rows for "user" at 1M
    # records (200 ms); checked posting by posting, counting stops after cap + 1 readable ones (40 ms).
    sql = ("SELECT t.i, (SELECT string_agg(x.rowid::text, ',') FROM (SELECT f.rowid FROM records_fts f "
           "WHERE f.lexemes @@ t.q::tsquery AND (SELECT true FROM records r WHERE r.seq = f.rowid "
           f"AND r.embedding_vec IS NOT NULL AND {where}){limit}) x) FROM unnest(?::text[]) WITH ORDINALITY AS t(q, i)")
    values = [*params, *([int(cap) + 1] if cap is not None else []), [query for _, query in asked]]
    for i, joined in conn.execute(sql, values).fetchall():
        term = asked[int(i) - 1][0]
        out[term] = np.sort(np.fromstring(joined, dtype=np.int64, sep=",")) if joined else np.zeros(0, dtype=np.int64)
    return out
