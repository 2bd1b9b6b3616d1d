"""Read-only opens on both backends: nothing is created or migrated, and nothing can be written."""

import sqlite3

import psycopg
import pytest

from memory_core.cli import main
from memory_core.store.backend import open_store
from memory_core.store.doctor import doctor_target
from tests.helpers import write


def _tables(url: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()[0]


@pytest.mark.parametrize("command", [["doctor"], ["stats"], ["grants"], ["prune-logs"]], ids=lambda c: c[0])
def test_a_looking_command_on_a_database_without_a_store_creates_none(new_target, command, capsys):
    url = new_target("postgresql")
    assert main(command + ["--path", url]) == 1
    out, err = capsys.readouterr()
    assert "holds no agent-memory store" in out + err and "Traceback" not in out + err
    assert _tables(url) == 0


def test_a_read_only_store_writes_nothing(any_service, target, backend):
    any_service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    write(any_service.start_session(agent_id="assistant", user_id="alice"), "The user sails on Sundays.", attribute="sport")
    store = open_store(target, "2026-03-05T10:00:00Z", read_only=True)
    try:
        assert store.read_only and store.pending_migrations == []
        with pytest.raises(sqlite3.Error, match="read-only|readonly"):
            store.set_meta("written_by", "a read-only open")
        assert store.get_meta("written_by") is None
        assert store.scalar("SELECT COUNT(*) FROM records") == 1
    finally:
        store.close()


def test_doctor_runs_every_check_on_a_read_only_open(any_service, target, backend):
    any_service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    write(any_service.start_session(agent_id="assistant", user_id="alice"), "The user sails on Sundays.", attribute="sport")
    report = doctor_target(target)
    assert report.ok, report.text()
    names = {c.name for c in report.checks}
    assert {"fts rows", "vectors", "change feed", "orphan rows", "forgotten records"} <= names
    if backend == "sqlite":  # FTS5's own check needs a writable statement: run on a side connection, rolled back
        assert {"sqlite integrity", "fts integrity"} <= names
