"""Migration 105: a search's origin may be ``extraction`` (the extractor's related-record look-ups).

Registered in :mod:`.migrations`. Like the other migration modules, this one imports nothing from
the rest of the store package and never changes once released; its PostgreSQL counterpart is
``store/pg/schema.py`` migration 6.

SQLite cannot change a column's CHECK in place, so ``search_log`` is rebuilt: its own stored
definition with the wider list, the rows copied with their ``seq`` (and AUTOINCREMENT's high-water
mark, so no seq is handed out twice), then its indexes made again.
"""

from __future__ import annotations

import sqlite3

OLD_CHECK = "origin IN ('model','host','admin','eval')"
NEW_CHECK = "origin IN ('model','host','admin','eval','extraction')"


def extraction_origin(conn: sqlite3.Connection) -> None:
    """Allow ``origin = 'extraction'`` in ``search_log``."""
    (table_sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'search_log'").fetchone()
    if OLD_CHECK not in table_sql:
        raise RuntimeError("search_log's origin check is not the one migration 90 made")
    indexes = [row[0] for row in conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'search_log' AND sql IS NOT NULL")]
    columns = [row[1] for row in conn.execute("PRAGMA table_info(search_log)")]
    sequence = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'search_log'").fetchone()
    listed = ", ".join(columns)
    conn.execute(table_sql.replace(OLD_CHECK, NEW_CHECK).replace("CREATE TABLE search_log", "CREATE TABLE search_log_new", 1))
    conn.execute(f"INSERT INTO search_log_new ({listed}) SELECT {listed} FROM search_log")
    conn.execute("DROP TABLE search_log")
    conn.execute("ALTER TABLE search_log_new RENAME TO search_log")
    if sequence is not None:  # a deleted row's seq is never handed out again, as before the rebuild
        conn.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'search_log'", (sequence[0],))
        conn.execute("INSERT INTO sqlite_sequence (name, seq) SELECT 'search_log', ? WHERE NOT EXISTS "
                     "(SELECT 1 FROM sqlite_sequence WHERE name = 'search_log')", (sequence[0],))
    for statement in indexes:
        conn.execute(statement)
