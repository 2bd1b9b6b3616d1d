"""The SQL dialect layer's rewrites (memory_core/store/pg/translate.py), one by one."""

import pytest

from memory_core.store.pg.translate import translate


@pytest.mark.parametrize("sqlite, postgres", [
    ("SELECT * FROM records WHERE id = ? AND seq > ?", "SELECT * FROM records WHERE id = %s AND seq > %s"),
    ("UPDATE extraction_runs SET claimed_by = :worker WHERE id = :id",
     "UPDATE extraction_runs SET claimed_by = %(worker)s WHERE id = %(id)s"),
    ("SELECT x::vector FROM t", "SELECT x::vector FROM t"),
    ("SELECT group_concat(rowid) FROM t", "SELECT string_agg((rowid)::text, ',') FROM t"),
    ("SELECT group_concat(alias, ' | ') FROM t", "SELECT string_agg((alias)::text, ' | ') FROM t"),
    ("SELECT json_extract(payload, '$.run_id') FROM events", "SELECT (payload::jsonb ->> 'run_id') FROM events"),
    ("SELECT instr(a, '/') FROM t", "SELECT strpos(a, '/') FROM t"),
    ("SELECT IFNULL(a, 0) FROM t", "SELECT COALESCE(a, 0) FROM t"),
    ("SELECT 1 FROM t WHERE a LIKE ? AND b NOT LIKE 'x%'", "SELECT 1 FROM t WHERE a ILIKE %s AND b NOT ILIKE 'x%%'"),
    ("SELECT 1 FROM r WHERE r.a = ? AND +r.scope_kind = ?", "SELECT 1 FROM r WHERE r.a = %s AND r.scope_kind = %s"),
    ("SELECT a + b FROM t", "SELECT a + b FROM t"),
    ("BEGIN IMMEDIATE", "BEGIN"),
])
def test_mechanical_rewrites(sqlite, postgres):
    assert translate(sqlite)[0] == postgres


def test_quoted_text_is_never_rewritten_but_percent_is_escaped():
    sql = "SELECT 'what? LIKE instr( :x 100%' AS s, \"odd?name\" FROM t WHERE a = ?"
    assert translate(sql)[0] == "SELECT 'what? LIKE instr( :x 100%%' AS s, \"odd?name\" FROM t WHERE a = %s"


def test_insert_or_ignore_becomes_on_conflict_do_nothing():
    out, returning = translate("INSERT OR IGNORE INTO entity_aliases (entity_id, alias, alias_norm) VALUES (?,?,?)")
    assert out == "INSERT INTO entity_aliases (entity_id, alias, alias_norm) VALUES (%s,%s,%s) ON CONFLICT DO NOTHING"
    assert returning is None


def test_insert_or_replace_names_the_primary_key():
    out, _ = translate("INSERT OR REPLACE INTO extraction_candidates (run_id, idx, attempt, candidate) VALUES (?, ?, ?, ?)")
    assert out.endswith("ON CONFLICT (run_id, attempt, idx) DO UPDATE SET candidate = EXCLUDED.candidate")


def test_an_insert_into_a_sequenced_table_returns_its_key_for_lastrowid():
    out, returning = translate("INSERT INTO events (at, kind) VALUES (?, ?)")
    assert out == "INSERT INTO events (at, kind) VALUES (%s, %s) RETURNING seq" and returning == "seq"
    assert translate("INSERT INTO index_changes (record_seq, op) VALUES (?, ?)")[1] == "version"
    assert translate("INSERT INTO grants (agent_id) VALUES (?)")[1] is None


def test_an_unknown_table_in_insert_or_replace_fails_loudly():
    with pytest.raises(KeyError):
        translate("INSERT OR REPLACE INTO nowhere (a) VALUES (?)")
