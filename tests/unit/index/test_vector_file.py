"""The vector file next to the store (index/vector_file.py, index/warm_start.py): an open reads it
instead of every record, brings it up to date from the change feed, and loads from the store
instead whenever the file is stale, damaged, from another store or holds a forgotten vector. In
every case the index after the open is exactly what a load from the store's rows gives."""

from __future__ import annotations

import logging
import shutil

import numpy as np
import pytest

from memory_core import FixedClock, MemoryService
from memory_core.index.vector_file import MATRIX_AT, Snapshot, VectorFile
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder

WORDS = "apples pears plums lemons cherries melons grapes figs dates kiwis limes mangoes".split()


def settings_for(**retrieval):
    return default_settings(retrieval={"vector_file_min_records": 5, **retrieval})


def open_service(path, clock, **retrieval):
    return MemoryService.open(path, settings_for(**retrieval), clock=clock, embedder=HashingEmbedder())


def fill(service, user: str, count: int, start: int = 0) -> list[str]:
    service.grant("a", f"user:{user}", read=True, write=True, actor="t")
    session = service.start_session(agent_id="a", user_id=user)
    ids = []
    for i in range(start, start + count):
        kind = "episodic" if i % 3 == 0 else "semantic"
        args = {"type": kind, "content": f"{user} keeps {WORDS[i % len(WORDS)]} in crate {i} near {WORDS[(i * 5) % len(WORDS)]}."}
        if kind == "semantic":
            args["attribute"] = f"crate_{i}"
        else:
            args["event_at"] = f"2026-02-{1 + i % 27:02d}T10:00:00Z"
        result = session.call_tool("memory_write", args)
        assert result["ok"], result
        ids.append(result["record_id"])
    return ids


def state(index) -> dict:
    """Everything a search reads from the index, by record seq."""
    seqs, alive = index.backend.seqs(), index.backend.alive()
    codes = {code: scope for scope, code in index._scope_codes.items()}
    out = {}
    for row in np.flatnonzero(alive):
        event = index._event[row]
        out[int(seqs[row])] = (index.backend._matrix[row].tobytes(), codes[int(index._scope[row])], int(index._status[row]),
                               int(index._type[row]), None if np.isnan(event) else float(event))
    return out


def loaded_from_rows(path, clock) -> dict:
    """The index a load from the store's rows gives (vector file off)."""
    with open_service(path, clock, vector_file=False) as service:
        return state(service.index)


def vectors_path(path):
    return path.with_name(path.name + ".vectors")


@pytest.fixture
def saved(tmp_path, clock):
    """A store of 40 records (two users) whose vector file was written; returns its path."""
    path = tmp_path / "m.sqlite"
    with open_service(path, clock) as service:
        fill(service, "u", 30)
        fill(service, "other", 10)
        assert service.index.keeper.write_now()["written"]
    assert vectors_path(path).is_file()
    return path


def test_the_next_open_reads_the_file_and_holds_what_a_load_from_rows_holds(saved, clock):
    with open_service(saved, clock) as service:
        assert service.index.keeper.last_load["used"] is True
        assert service.index.keeper.last_load["changes_since"] == 0
        assert state(service.index) == loaded_from_rows(saved, clock)
        top = service.search(agent_id="a", user_id="u", query="u keeps plums in crate 2 near figs").results[0]
        assert top.record.content.startswith("u keeps plums in crate 2 ")


def test_changes_since_the_file_are_applied_before_the_first_search(saved, clock):
    with open_service(saved, clock, vector_file=False) as service:  # another process, not keeping the file
        new = fill(service, "u", 3, start=100)
        session = service.start_session(agent_id="a", user_id="u")
        changed = session.call_tool("memory_write", {"type": "semantic", "content": "u keeps quinces in crate 5 now.",
                                                     "attribute": "crate_5"})  # supersedes crate 5: a status change
        assert changed["ok"] and changed["superseded"]
    with open_service(saved, clock) as service:
        load = service.index.keeper.last_load
        assert load["used"] is True and load["changes_since"] >= 5
        assert state(service.index) == loaded_from_rows(saved, clock)
        first = service.search(agent_id="a", user_id="u", query="u keeps apples in crate 100")
        assert first.results[0].record.id == new[0]
        assert all(r.record.status != "superseded" for r in first.results)


def test_a_forget_erases_the_file_and_an_older_copy_put_back_is_not_used(saved, clock):
    old = vectors_path(saved).read_bytes()
    with open_service(saved, clock) as service:
        victim = service.search(agent_id="a", user_id="u", query="u keeps pears in crate 1").results[0].record
        vector = bytes(service.index.vectors([victim.seq])[0].tobytes())
        assert vector in old
        service.forget(victim.id, actor="t", reason="user asked")
        service.index.keeper.wait(60)
        for leftover in saved.parent.glob("*vectors*"):  # the new file (if written yet) lacks it
            assert vector not in leftover.read_bytes()
    vectors_path(saved).write_bytes(old)  # as if a slower process wrote its older file after the forget
    with open_service(saved, clock) as service:
        assert service.index.keeper.last_load["used"] is False
        assert "forgotten" in service.index.keeper.last_load["why"]
        assert victim.seq not in state(service.index)
        assert state(service.index) == loaded_from_rows(saved, clock)


def test_forgetting_overwrites_the_rows_before_removing_the_file(saved, clock):
    path = vectors_path(saved)
    keep = path.with_name("kept-inode")
    with open_service(saved, clock, vector_file=False) as service:
        victim = service.search(agent_id="a", user_id="u", query="u keeps lemons in crate 3").results[0].record
        vector = bytes(service.index.vectors([victim.seq])[0].tobytes())
        keep.hardlink_to(path)  # a second name for the same bytes, to read them after the unlink
        service.forget(victim.id, actor="t", reason="user asked")
    assert not path.exists()  # removed even by a process that does not keep the file itself
    assert vector not in keep.read_bytes()


ROW_BYTES = 64 * 4
SMALL_AT = MATRIX_AT + 1024 * ROW_BYTES  # 40 rows reserve the minimum capacity of 1,024

DAMAGE = {
    "empty": lambda b: b"",
    "cut to the magic": lambda b: b[:21],
    "cut in the vectors": lambda b: b[: MATRIX_AT + 10 * ROW_BYTES],
    "cut in the free rows": lambda b: b[: SMALL_AT - 100],
    "last byte cut": lambda b: b[:-1],
    "a byte appended": lambda b: b + b"x",
    "a flipped byte in the vectors": lambda b: _flip(b, MATRIX_AT + 7 * ROW_BYTES + 5),
    "a flipped byte in the seqs": lambda b: _flip(b, SMALL_AT + 3),
    "a flipped byte in the event times": lambda b: _flip(b, SMALL_AT + 40 * 14 + 5),
    "a flipped byte in the header": lambda b: _flip(b, len(b) - 60),
    "bad magic": lambda b: b"NOT-A-VECTOR-FILE" + b[17:],
    "another format's bytes": lambda b: b"AGENT-MEMORY-IVF\n" + b[17:],
}


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x5A]) + data[at + 1:]


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_a_damaged_file_is_reported_removed_and_written_again(saved, clock, caplog, damage):
    path = vectors_path(saved)
    path.write_bytes(DAMAGE[damage](path.read_bytes()))
    caplog.set_level(logging.INFO, logger="memory_core.index.warm_start")
    with open_service(saved, clock) as service:
        keeper = service.index.keeper
        assert keeper.last_load["used"] is False
        assert state(service.index) == loaded_from_rows(saved, clock)
        assert "not used" in caplog.text
        keeper.wait(60)
    assert path.is_file()  # the load from rows wrote a new, whole file
    with open_service(saved, clock) as service:
        assert service.index.keeper.last_load["used"] is True


@pytest.mark.parametrize("at", [MATRIX_AT - 7, MATRIX_AT + 40 * ROW_BYTES + 9, SMALL_AT - 1],
                         ids=["padding after the magic", "first free row", "last free row"])
def test_bytes_no_row_reads_are_not_checked_and_change_nothing(saved, clock, at):
    """The padding and the free rows (a hole the process appends into, overwriting a whole row before
    it is live) are outside the checksum; garbage there is never read."""
    path = vectors_path(saved)
    path.write_bytes(_flip(path.read_bytes(), at))
    with open_service(saved, clock) as service:
        assert service.index.keeper.last_load["used"] is True
        fill(service, "u", 3, start=950)  # rows appended into the free rows
        assert state(service.index) == loaded_from_rows(saved, clock)


def test_a_file_from_another_store_is_refused(tmp_path, saved, clock):
    other = tmp_path / "other.sqlite"
    with open_service(other, clock) as service:  # the same writes in the same order: only the record ids differ
        fill(service, "u", 30)
        fill(service, "other", 10)
    shutil.copy(vectors_path(saved), vectors_path(other))
    with open_service(other, clock) as service:
        assert service.index.keeper.last_load["used"] is False
        assert "another store" in service.index.keeper.last_load["why"]
        assert state(service.index) == loaded_from_rows(other, clock)


def test_a_copy_of_the_store_that_went_on_differently_refuses_the_original_s_file(tmp_path, saved, clock):
    copy = tmp_path / "copy.sqlite"
    shutil.copy(saved, copy)
    for path, start in ((saved, 200), (copy, 300)):  # the same number of writes, different records
        with open_service(path, clock) as service:
            fill(service, "u", 1, start=start)
            assert service.index.keeper.write_now()["written"]
    shutil.copy(vectors_path(saved), vectors_path(copy))
    with open_service(copy, clock) as service:
        assert service.index.keeper.last_load["used"] is False
        assert "anchor" in service.index.keeper.last_load["why"]
        assert state(service.index) == loaded_from_rows(copy, clock)


def test_a_well_formed_file_whose_rows_disagree_with_the_store_is_refused(saved, clock):
    file = VectorFile(vectors_path(saved), {"model": HashingEmbedder.model_name, "model_version": HashingEmbedder().model_version,
                                            "dim": 64})
    header = file.read_header()
    assert header is not None
    body = file.map_body(header)
    matrix = np.array(body.matrix[: header["rows"]])
    matrix[0] = matrix[1]  # a different vector under the first record, with a checksum that matches
    file.save(Snapshot(header["records_version"], header["anchor"], header["scopes"], header["statuses"], header["types"],
                       body.seqs, body.scope, body.status, body.type, body.event, matrix, np.arange(header["rows"])))
    with open_service(saved, clock) as service:
        assert service.index.keeper.last_load["used"] is False
        assert "differs" in service.index.keeper.last_load["why"]
        assert state(service.index) == loaded_from_rows(saved, clock)


def test_another_embedder_s_file_is_left_alone_and_not_used(saved, clock):
    class Other(HashingEmbedder):
        model_name = "test/another-embedder"

    service = MemoryService.open(saved, settings_for(), clock=clock, embedder=Other(), allow_embedder_mismatch=True)
    try:
        assert service.index.keeper.last_load["used"] is False
        assert "another embedder" in service.index.keeper.last_load["why"]
    finally:
        service.close()


def test_a_file_newer_than_the_store_is_not_used(tmp_path, saved, clock):
    older = tmp_path / "older.sqlite"
    shutil.copy(saved, older)  # the store as it was when the file was written
    with open_service(saved, clock) as service:
        fill(service, "u", 2, start=400)
        assert service.index.keeper.write_now()["written"]
    shutil.copy(older, saved)  # an older copy of the store put back under the newer file
    with open_service(saved, clock) as service:
        assert service.index.keeper.last_load["used"] is False
        assert "store at" in service.index.keeper.last_load["why"]
        assert state(service.index) == loaded_from_rows(saved, clock)


def test_a_restore_makes_the_file_stale(tmp_path, saved, clock):
    backup = tmp_path / "backup.sqlite"
    with open_service(saved, clock) as service:
        service.snapshot(backup)
        fill(service, "u", 2, start=500)
        service.restore(backup)
        assert state(service.index) == loaded_from_rows(saved, clock)


def test_with_the_setting_off_the_file_is_neither_read_nor_written(tmp_path, saved, clock):
    fresh = tmp_path / "fresh.sqlite"
    with open_service(fresh, clock, vector_file=False) as service:
        fill(service, "u", 12)
        service.index.keeper.after_changes()
    assert not vectors_path(fresh).exists()
    with open_service(saved, clock, vector_file=False) as service:
        assert service.index.keeper.last_load == {}


def test_a_small_store_writes_no_file(tmp_path, clock):
    path = tmp_path / "small.sqlite"
    with open_service(path, clock, vector_file_min_records=50) as service:
        fill(service, "u", 10)
        service.index.keeper.after_changes()
        assert service.index.keeper.wait(60)
    assert not vectors_path(path).exists()


def test_no_file_is_written_while_a_write_transaction_is_open(saved, clock):
    with open_service(saved, clock) as service:
        with service.store.transaction():
            assert service.index.keeper.write_now()["written"] is False


def test_the_file_is_written_again_once_the_feed_has_moved_far_past_it(saved, clock, monkeypatch):
    from memory_core.index import warm_start

    monkeypatch.setattr(warm_start, "REWRITE_AFTER", 4)
    with open_service(saved, clock) as service:
        before = service.index.keeper.file_version
        fill(service, "u", 6, start=600)
        assert service.index.keeper.wait(60)
        assert service.index.keeper.file_version > before
    with open_service(saved, clock) as service:
        assert service.index.keeper.last_load["used"] is True
        assert service.index.keeper.last_load["changes_since"] < 4


def test_a_store_in_memory_keeps_no_file(clock):
    with MemoryService.open(":memory:", settings_for(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder()) as service:
        assert service.index.keeper is None


def test_records_added_without_the_change_feed_make_the_file_unusable(saved, clock):
    """A store filled by a bulk loader that bypasses the feed (as the benchmark corpus does), or the
    file of a smaller store built the same way, must not hide the records the file lacks."""
    with open_service(saved, clock) as service:
        version = service.store.records_version()
        fill(service, "u", 2, start=800)
        with service.store.transaction() as conn:  # as if the two records had been loaded in bulk
            conn.execute("DELETE FROM index_changes WHERE version > ?", (version,))
            conn.execute("UPDATE store_meta SET value = ? WHERE key = 'records_version'", (str(version),))
    with open_service(saved, clock) as service:
        assert service.index.keeper.last_load["used"] is False
        assert "not all in the change feed" in service.index.keeper.last_load["why"]
        assert state(service.index) == loaded_from_rows(saved, clock)


def test_a_read_only_open_reads_the_file_and_writes_or_removes_nothing(saved, clock):
    path = vectors_path(saved)
    service = MemoryService.open(saved, settings_for(), clock=clock, embedder=HashingEmbedder(), read_only=True)
    try:
        assert service.index.keeper.last_load["used"] is True
        assert service.index.keeper.write_now()["written"] is False
    finally:
        service.close()
    damaged = path.read_bytes()[:-1]
    path.write_bytes(damaged)
    service = MemoryService.open(saved, settings_for(), clock=clock, embedder=HashingEmbedder(), read_only=True)
    try:
        assert service.index.keeper.last_load["used"] is False
        assert state(service.index) == loaded_from_rows(saved, clock)
        assert service.index.keeper.wait(60)
    finally:
        service.close()
    assert path.read_bytes() == damaged  # left for a process that may write to deal with


def test_a_store_path_with_uri_characters_keeps_its_file(tmp_path, clock):
    """The check after writing reads the feed through its own connection: a path with ?, %, # or
    non-ASCII letters must still name the store (else every new file would be thrown away)."""
    folder = tmp_path / "we?ird %41#dir ünï"
    folder.mkdir()
    path = folder / "m?e%20.sqlite"
    with open_service(path, clock) as service:
        fill(service, "u", 8)
        assert service.index.keeper.write_now()["written"] is True
    with open_service(path, clock) as service:
        assert service.index.keeper.last_load["used"] is True
