"""Migration 105: a store whose search_log predates it keeps every row, its seq numbers and its
indexes, and then accepts the ``extraction`` origin (and still refuses an unknown one)."""

import sqlite3

import pytest

from memory_core.store.migrations import MIGRATIONS, migrate

NOW = "2026-03-05T10:00:00.000000Z"
ROW = "INSERT INTO search_log (id, at, agent_id, user_id, raw_query, origin) VALUES (?, ?, 'a', 'u', 'q', ?)"


def test_an_older_search_log_is_rebuilt_with_the_extraction_origin(tmp_path, monkeypatch):
    conn = sqlite3.connect(tmp_path / "old.sqlite", isolation_level=None)
    monkeypatch.delitem(MIGRATIONS, 105)
    migrate(conn, NOW)
    for n, origin in enumerate(("model", None, "admin")):
        conn.execute(ROW, (f"srch_{n}", NOW, origin))
    conn.execute("DELETE FROM search_log WHERE id = 'srch_2'")  # the highest seq is gone: AUTOINCREMENT must not reuse it
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(ROW, ("srch_x", NOW, "extraction"))
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'search_log'")}
    monkeypatch.undo()

    assert migrate(conn, NOW) == [105]
    assert [tuple(r) for r in conn.execute("SELECT seq, id, origin FROM search_log ORDER BY seq")] == [
        (1, "srch_0", "model"), (2, "srch_1", None)]
    conn.execute(ROW, ("srch_e", NOW, "extraction"))
    assert conn.execute("SELECT seq FROM search_log WHERE id = 'srch_e'").fetchone()[0] == 4
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(ROW, ("srch_r", NOW, "robot"))
    assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'search_log'")} == indexes
    assert "search_log_new" not in {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
