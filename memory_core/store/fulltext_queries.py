"""Named full-text queries of the search pipeline, on both backends.

The lexical generator needs, per query term, the ascending seqs of the records holding it (its
doclist); the gate's rest cover needs how many readable records hold a word starting with a stem.
On SQLite the full-text index is FTS5 (``records_fts``, tokenizer ``unicode61 remove_diacritics
2``); every term goes to it as a double-quoted string, which FTS5 always reads as a literal
phrase, so operator syntax in a user's text is only ever searched as words. On PostgreSQL it is a
``tsvector`` of the same tokens (:mod:`.pg.fulltext`), and postings are filtered by the search's
hard filter in SQL.

``readable`` is the search's readable set: on SQLite a boolean lookup table indexed by seq (from
the vector index's mask), on PostgreSQL an ``index.pg_vector.SqlFilter`` (its SQL and parameters).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .db import Store

_NONE = np.zeros(0, dtype=np.int64)


def fts_match_expression(terms: Sequence[str]) -> str | None:
    """``"a" OR "b c"``: each term a quoted FTS5 string (a literal phrase); None for no terms."""
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _doclist(store: Store, match: str) -> np.ndarray:
    with store.lock:
        row = store.conn.execute("SELECT group_concat(rowid) FROM records_fts WHERE records_fts MATCH ?", (match,)).fetchone()
    # a doclist: distinct rowids, ascending, as one string (a Python row per posting costs ten times more)
    return np.fromstring(row[0], dtype=np.int64, sep=",") if row and row[0] else _NONE


def term_doclist(store: Store, term: str) -> np.ndarray:
    """SQLite: ascending seqs of every record (readable or not) holding ``term`` (FTS5's doclist)."""
    return _doclist(store, fts_match_expression([term]))


def readable_term_postings(store: Store, readable: Any, terms: Sequence[str], cap: int | None) -> dict[str, np.ndarray]:
    """PostgreSQL: per term, ascending seqs of the readable records holding it, at most ``cap + 1``
    (all terms in one statement; see :func:`.pg.fulltext.readable_doclists`)."""
    from .pg.fulltext import readable_doclists

    with store.lock:
        return readable_doclists(store.conn, list(terms), readable.where, readable.params, cap)


def readable_prefix_count(store: Store, prefix: str, readable: Any) -> int:
    """Readable records holding a word that starts with ``prefix`` (letters and digits only):
    FTS5 ``"prefix"*`` on SQLite, a ``prefix:*`` tsquery on PostgreSQL."""
    if store.backend == "postgresql":
        if not prefix or "'" in prefix or "\\" in prefix:
            return 0  # a stem is letters and digits only; never build a tsquery from anything else
        # the readable set is the filter's SQL, never a list of seqs: each posting's record is
        # checked against it, and the readable ones counted
        with store.lock:
            row = store.conn.execute(
                "SELECT count(*) FROM records_fts f WHERE f.lexemes @@ ?::tsquery AND (SELECT true FROM records r "
                f"WHERE r.seq = f.rowid AND r.embedding_vec IS NOT NULL AND {readable.where})",
                [f"'{prefix}':*", *readable.params]).fetchone()
        return int(row[0]) if row else 0
    postings = _doclist(store, f'"{prefix}"*')
    postings = postings[postings < len(readable)]
    return int(readable[postings].sum())
