"""``migrate-store`` from a store that writer processes keep writing to, in both directions, on the
real PostgreSQL server: every table comes from one snapshot, so the copy is verified and holds no
record without its links; a copy that fails or is killed leaves no store that looks complete."""

from __future__ import annotations

import json
import multiprocessing as mp
import subprocess
import sys
from pathlib import Path

import pytest

import memory_core.store.transfer as transfer
from memory_core import FixedClock, MemoryService
from memory_core.cli import main
from memory_core.errors import StoreUnusableError
from memory_core.settings import default_settings
from memory_core.store.doctor import doctor_target
from tests.fakes import HashingEmbedder
from tests.helpers import write

from .pg_workers import live_writer

ROOT = Path(__file__).resolve().parents[2]
WRITERS = 2
DIRECTIONS = [("sqlite", "postgresql"), ("postgresql", "sqlite")]


def _open(target):
    return MemoryService.open(target, default_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())


def _seed(target) -> None:
    svc = _open(target)
    for w in range(WRITERS):
        svc.grant(f"w{w}", "project:shared", read=True, write=True, actor="t")
    svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
    write(svc.start_session(agent_id="assistant", user_id="alice"), "The user prefers window seats.", attribute="seat")
    svc.close()


def _count(target, sql: str) -> int:
    svc = _open(target)
    try:
        return svc.store.scalar(sql)
    finally:
        svc.close()


WORKER_RECORDS = "SELECT COUNT(*) FROM records WHERE content LIKE 'Worker %'"
LINKED = ("SELECT COUNT(*) FROM records r WHERE r.content LIKE 'Worker %' AND EXISTS (SELECT 1 FROM record_entities re "
          "JOIN entities e ON e.id = re.entity_id JOIN entity_aliases a ON a.entity_id = e.id WHERE re.record_id = r.id "
          "AND re.role = 'mention')")


@pytest.mark.parametrize("source_backend, destination_backend", DIRECTIONS)
def test_a_copy_taken_while_writers_write_is_one_consistent_verified_snapshot(
        new_target, monkeypatch, capsys, source_backend, destination_backend):
    source, destination = new_target(source_backend, "source.sqlite"), new_target(destination_backend, "copy.sqlite")
    _seed(source)
    ctx = mp.get_context("spawn")
    stop, progress = ctx.Event(), ctx.Queue()
    writers = [ctx.Process(target=live_writer, args=(str(source), w, stop, progress)) for w in range(WRITERS)]
    for p in writers:
        p.start()

    def next_write():
        note = progress.get(timeout=300)
        assert "error" not in note, note
        return note

    rows, waited = transfer._rows, []

    def writes_land_between_tables(store, table, columns, order):
        # After the records are read and before their links are: more writes commit in the source
        # (each a record, an entity, an alias and a link). Read without one snapshot, the links of
        # records that were not copied arrive and the destination's foreign keys refuse them.
        if table == "record_entities" and not waited:
            waited.extend(next_write() for _ in range(2 * WRITERS))
        return rows(store, table, columns, order)

    try:
        for _ in range(2 * WRITERS):  # the writers are running before the copy starts
            next_write()
        monkeypatch.setattr(transfer, "_rows", writes_land_between_tables)
        code = main(["migrate-store", str(source), str(destination), "--json"])
        out, err = capsys.readouterr()
        next_write()  # still writing after the copy committed
    finally:
        stop.set()
        done, late = 0, []
        while done < WRITERS:  # read every note up to each writer's last, so the writers can exit
            note = progress.get(timeout=300)
            done += bool(note.get("done"))
            late += [note] if "error" in note else []
        for p in writers:
            p.join(timeout=120)
            if p.is_alive():
                p.kill()
    assert not late, late
    assert waited, "the copy never reached the links table"
    assert code == 0, err
    report = json.loads(out)
    assert report["ok"] and report["committed"], report
    copied = {t["table"]: t["source_rows"] for t in report["tables"]}
    assert all(t["source_rows"] == t["destination_rows"] for t in report["tables"])
    in_copy = _count(destination, WORKER_RECORDS)
    assert in_copy == copied["records"] - 1 > 0  # the seeded record, plus what the snapshot held
    assert _count(source, WORKER_RECORDS) > in_copy + 2 * WRITERS - 1  # the writes during the copy are not in it
    assert _count(destination, LINKED) == in_copy  # every record copied with its entity, alias and link
    health = doctor_target(destination)
    assert health.ok, health.text()
    with _open(destination) as svc:  # the copy serves: a copied record is found by its words
        rid, content = svc.store.query_one("SELECT id, content FROM records WHERE content LIKE 'Worker %' ORDER BY seq")
        session = svc.start_session(agent_id="w0", user_id="team", project_id="shared")
        found = session.call_tool("memory_search", {"query": content})
        assert rid in [r["id"] for r in found["results"]], found


def _nul_in_source(tmp_path) -> Path:
    source = tmp_path / "source.sqlite"
    _seed(source)
    svc = _open(source)
    with svc.store.transaction() as conn:  # a row from before NUL was refused at the door
        conn.execute("UPDATE grants SET created_by = ? WHERE agent_id = 'assistant'", ("legacy\x00import",))
    svc.close()
    return source


def test_a_copy_that_fails_midway_leaves_a_postgresql_target_marked_unusable(tmp_path, new_target, capsys):
    source = _nul_in_source(tmp_path)  # PostgreSQL text cannot hold it: the copy fails at the grants
    destination = new_target("postgresql")
    assert main(["migrate-store", str(source), destination]) == 2
    err = capsys.readouterr().err
    assert "NUL" in err and "Traceback" not in err
    with pytest.raises(StoreUnusableError) as caught:
        _open(destination)
    assert caught.value.problem == "incomplete" and "migrate-store" in caught.value.message
    assert _rows_in(destination) == 0  # nothing half-written
    report = doctor_target(destination)
    assert not report.ok and any(c.name == "unfinished copy" and c.status == "fail" for c in report.checks)


def _rows_in(url: str) -> int:
    from memory_core.store.backend import open_store

    store = open_store(url, "", read_only=True)
    try:
        return sum(store.scalar(f"SELECT COUNT(*) FROM {t}") for t in ("records", "entities", "grants", "events"))
    finally:
        store.close()


@pytest.mark.parametrize("source_backend, destination_backend", DIRECTIONS)
def test_a_copy_whose_disk_fails_midway_leaves_no_store_that_looks_complete(
        tmp_path, new_target, monkeypatch, capsys, source_backend, destination_backend):
    import sqlite3

    source = new_target(source_backend, "source.sqlite")
    _seed(source)
    destination = new_target(destination_backend, "copy.sqlite")
    rows = transfer._rows

    def disk_fails_at_the_turns(store, table, columns, order):
        if table == "turns":
            raise sqlite3.OperationalError("disk I/O error")
        return rows(store, table, columns, order)

    monkeypatch.setattr(transfer, "_rows", disk_fails_at_the_turns)
    assert main(["migrate-store", str(source), str(destination)]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("copied ")]
    assert lines == ["error [database]: disk I/O error"]
    if destination_backend == "sqlite":  # the file the copy created is gone, with its -wal and -shm
        assert not any(p.name.startswith("copy.sqlite") for p in tmp_path.iterdir())
    else:  # an existing database cannot be removed: it is marked, and holds nothing
        with pytest.raises(StoreUnusableError, match="did not finish"):
            _open(destination)
        assert _rows_in(destination) == 0


def test_a_source_that_is_itself_an_unfinished_copy_is_refused(tmp_path, new_target, capsys):
    source = new_target("postgresql")
    _seed(source)
    svc = _open(source)
    svc.store.set_meta("migrate_store_incomplete", "copy from elsewhere started at some time")
    svc.close()
    destination = tmp_path / "copy.sqlite"
    assert main(["migrate-store", source, str(destination)]) == 2
    assert "unfinished migrate-store target" in capsys.readouterr().err
    assert not destination.exists()


@pytest.mark.parametrize("source_backend, destination_backend", DIRECTIONS)
def test_a_copy_killed_midway_leaves_the_target_marked_and_a_rerun_completes_it(
        new_target, capsys, source_backend, destination_backend):
    source, destination = new_target(source_backend, "source.sqlite"), new_target(destination_backend, "copy.sqlite")
    _seed(source)
    child = subprocess.Popen([sys.executable, "-c", "import sys; from tests.contract.pg_workers import migrate_and_hang; "
                              "migrate_and_hang(sys.argv[1], sys.argv[2])", str(source), str(destination)],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "copying", child.stderr.read()
    finally:
        child.kill()
        child.wait(timeout=60)
    with pytest.raises(StoreUnusableError) as caught:
        _open(destination)
    assert caught.value.problem == "incomplete"
    assert main(["doctor", "--path", str(destination)]) == 1
    assert "unfinished copy" in capsys.readouterr().out
    assert main(["migrate-store", str(source), str(destination)]) == 0
    assert "verified: every table matches" in capsys.readouterr().out
    with _open(destination) as svc:
        assert svc.stats()["records"] == 1
