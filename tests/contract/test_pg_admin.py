"""The store's admin commands on PostgreSQL: doctor's own checks, backup refused with the way to do it."""

from pathlib import Path

import pytest

from memory_core.cli import main
from memory_core.errors import InvalidInputError
from tests.helpers import write


def test_doctor_reports_a_healthy_postgresql_store(any_service, backend, capsys):
    any_service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    s = any_service.start_session(agent_id="assistant", user_id="alice")
    rid = write(s, "The user likes green tea.", attribute="drink")
    write(s, "The user cycles to work.", attribute="commute")
    s.call_tool("memory_forget", {"record_id": rid, "reason": "asked"})
    if backend == "postgresql":
        any_service.store.erase_now()
    report = any_service.doctor()
    assert report.ok, report.text()
    names = {c.name for c in report.checks}
    assert {"fts rows", "vectors", "change feed", "orphan rows", "forgotten records"} <= names
    if backend == "postgresql":
        assert {"pgvector column", "ivf index", "record counts"} <= names
        # the doctor can fail: a full-text row missing is reported
        any_service.store.conn.execute("DELETE FROM records_fts")
        assert not any_service.doctor().ok


def test_backup_of_a_postgresql_store_is_refused_with_the_alternatives(new_target, capsys):
    url = new_target("postgresql")
    from memory_core.store.backup import backup_store

    with pytest.raises(InvalidInputError, match="pg_dump"):
        backup_store(url, "/tmp/never.sqlite")
    assert main(["backup", "--path", url, "/tmp/never.sqlite"]) == 2
    assert "migrate-store" in capsys.readouterr().err


def test_the_admin_app_for_a_service_opens_the_same_store(any_service, backend):
    from memory_core.app_launch import STORE_ENV
    from memory_core.notebook.launcher import AdminApp, store_target

    app = AdminApp(store_target(any_service))
    if backend == "postgresql":  # the full URL, never a path made of it (nor the password-hidden form)
        assert app.store == any_service.store.url and app.environment()[STORE_ENV] == any_service.store.url
        assert "postgresql:/" + "/" in repr(app)
    else:
        assert app.store == Path(any_service.store.path).resolve()
    assert app.demo is False
