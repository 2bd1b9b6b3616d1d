"""The approximate index kept next to the store (index/ann_file.py): saved after a build, loaded and
brought up to date on the next open, and rebuilt when it is stale, corrupt or holds a forgotten
record's vector."""

from __future__ import annotations

import logging
import shutil

import numpy as np
import pytest

from memory_core import MemoryService
from memory_core.index.ann_file import AnnFile, AnnFileError
from memory_core.settings import load_settings
from tests.fakes import HashingEmbedder

pytest.importorskip("faiss")

WORDS = ("apples pears plums lemons cherries melons grapes figs dates kiwis limes mangoes peaches olives "
         "walnuts almonds carrots leeks onions radishes").split()
PLACES = "Lisbon Kyoto Oslo Denver Nairobi Lima Hanoi Vienna".split()


def settings_for(min_records: int = 40, persist: bool = True):
    return load_settings(retrieval={"ann_min_records": min_records, "ann_exact_below_allowed": 0, "ann_persist": persist})


def open_service(path, clock, **options):
    return MemoryService.open(path, settings_for(**options), clock=clock, embedder=HashingEmbedder())


def fill(service, user: str, count: int, start: int = 0) -> list[str]:
    service.grant("a", f"user:{user}", read=True, write=True, actor="t")
    session = service.start_session(agent_id="a", user_id=user)
    ids = []
    for i in range(start, start + count):
        text = f"{user} keeps {WORDS[i % len(WORDS)]} and {WORDS[(i * 7 + 3) % len(WORDS)]} in {PLACES[i % len(PLACES)]} number {i}."
        result = session.call_tool("memory_write", {"type": "semantic", "content": text, "attribute": f"item{i}"})
        assert result["ok"], result
        ids.append(result["record_id"])
    return ids


def ready(service) -> dict:
    """Wait for the background build or load, install it, and return what it did."""
    backend = service.index.backend
    assert backend.wait_until_built(120)
    service.search(agent_id="a", user_id="u", query="apples")  # installs the pending index
    return dict(backend.build_info)


def searches(service, user: str = "u") -> list[list[tuple[str, float | None]]]:
    out = []
    for query in ("apples in Lisbon", "pears and plums", "walnuts Kyoto", "onions number 7"):
        response = service.search(agent_id="a", user_id=user, query=query)
        assert response.explanation.dense_index["method"] == "approximate"
        out.append([(r.record.id, r.explanation.cosine) for r in response.results])
    return out


@pytest.fixture
def built(tmp_path, clock):
    """A store above the threshold whose index was built once and saved; returns its path and answers."""
    path = tmp_path / "m.sqlite"
    with open_service(path, clock, min_records=10**6) as service:
        fill(service, "u", 60)
        fill(service, "other", 30)
    with open_service(path, clock) as service:
        info = ready(service)
        assert info["from_file"] is False
        answers = searches(service)
    assert (tmp_path / "m.sqlite.ivf").is_file()
    return path, answers


def test_the_next_open_loads_the_saved_index_and_answers_the_same(built, clock):
    path, answers = built
    with open_service(path, clock) as service:
        info = ready(service)
        assert info["from_file"] is True and info["added"] == 0 and info["removed"] == 0
        assert searches(service) == answers


def test_records_written_since_the_file_are_added_when_it_is_loaded(built, clock):
    path, _ = built
    with open_service(path, clock, min_records=10**6) as service:  # this process never builds an index
        new_ids = fill(service, "u", 3, start=500)
    with open_service(path, clock) as service:
        info = ready(service)
        assert info["from_file"] is True and info["added"] == 3
        response = service.search(agent_id="a", user_id="u", query="u keeps walnuts and apples in Lisbon number 500")
        assert response.explanation.dense_index["method"] == "approximate"
        assert response.results[0].record.id == new_ids[0]


def test_scope_masks_stay_exact_with_a_loaded_index(built, clock):
    path, _ = built
    with open_service(path, clock) as service:
        ready(service)
        service.grant("a", "user:other", read=True, write=True, actor="t")
        for user in ("u", "other"):
            for query in ("apples", "Lisbon", "number 3", "melons and figs"):
                response = service.search(agent_id="a", user_id=user, query=query)
                assert response.explanation.dense_index["method"] == "approximate"
                assert all(r.record.scope == f"user:{user}" for r in response.results)
                for hit in response.trace.stage("dense").outputs["candidates"]:
                    assert service.record(hit["id"]).scope == f"user:{user}"


def test_forgetting_a_record_removes_the_file_and_the_next_open_rebuilds_without_it(built, clock):
    path, _ = built
    ivf = path.with_name(path.name + ".ivf")
    with open_service(path, clock) as service:
        ready(service)
        victim = service.search(agent_id="a", user_id="u", query="apples in Lisbon").results[0].record
        service.forget(victim.id, actor="t", reason="user asked")
        assert not ivf.exists()  # no copy of the forgotten vector stays on disk
    with open_service(path, clock) as service:
        info = ready(service)
        assert info["from_file"] is False
        loaded = service.index.ann_file.load()
        assert loaded is not None and victim.seq not in set(loaded.seqs.tolist())


def test_a_file_written_while_a_record_was_forgotten_is_not_used(built, clock):
    path, _ = built
    with open_service(path, clock, min_records=10**6, persist=False) as service:
        victim = service.search(agent_id="a", user_id="u", query="pears").results[0].record.id
        ivf = service.index.ann_file.path
        saved = ivf.read_bytes()
        service.forget(victim, actor="t", reason="user asked")
        assert not ivf.exists()  # removed even by a process that does not keep the file itself
    ivf.write_bytes(saved)  # as if a slower process wrote its older index after the forget
    with open_service(path, clock) as service:
        assert ready(service)["from_file"] is False


def test_a_corrupt_file_is_reported_and_rebuilt(built, clock, caplog):
    path, answers = built
    ivf = path.with_name(path.name + ".ivf")
    data = bytearray(ivf.read_bytes())
    data[len(data) // 2] ^= 0xFF
    ivf.write_bytes(bytes(data))
    with pytest.raises(AnnFileError, match="checksum"):
        AnnFile(ivf, {}, lambda v: None).load()
    with caplog.at_level(logging.WARNING), open_service(path, clock) as service:
        info = ready(service)
        assert info["from_file"] is False
        assert any("unusable" in r.getMessage() and "checksum" in r.getMessage() for r in caplog.records)
        assert searches(service) == answers
        assert service.index.ann_file.load() is not None  # replaced by a good file


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_a_damaged_file_is_rebuilt(built, clock, damage):
    path, answers = built
    ivf = path.with_name(path.name + ".ivf")
    data = ivf.read_bytes()
    ivf.write_bytes({"truncate": data[: len(data) - 100], "garbage": b"not an index at all" * 10, "empty": b""}[damage])
    with open_service(path, clock) as service:
        assert ready(service)["from_file"] is False
        assert searches(service) == answers


def test_a_file_of_another_embedder_is_stale(built, clock):
    path, _ = built
    with open_service(path, clock) as service:
        other = AnnFile(service.index.ann_file.path, {**service.index.ann_file.identity, "model_version": "other"},
                        service.index.ann_file.changes_since)
        assert other.load() is None and "another embedder" in other.last_event["stale"]


def test_a_store_restored_under_a_newer_file_rebuilds(built, clock, tmp_path):
    path, _ = built
    older = tmp_path / "older.sqlite"
    with open_service(path, clock, min_records=10**6) as service:
        service.snapshot(older)
        fill(service, "u", 2, start=900)
        service.index.ann_file.path.unlink()
    with open_service(path, clock) as service:
        assert ready(service)["from_file"] is False  # a new file, at the newer version
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    shutil.copy(older, path)  # the store goes back to an older state under the newer file
    with open_service(path, clock) as service:
        assert ready(service)["from_file"] is False


def test_restore_resets_the_change_feed_so_the_file_is_rebuilt(built, clock, tmp_path):
    path, answers = built
    with open_service(path, clock) as service:
        ready(service)
        service.snapshot(tmp_path / "snap.sqlite")
        service.restore(tmp_path / "snap.sqlite")
        assert ready(service)["from_file"] is False
        assert searches(service) == answers


def test_without_persistence_nothing_is_written(tmp_path, clock):
    path = tmp_path / "m.sqlite"
    with open_service(path, clock, persist=False) as service:
        fill(service, "u", 45)
        assert ready(service)["from_file"] is False
    assert not (tmp_path / "m.sqlite.ivf").exists()
    assert not list(tmp_path.glob(".*.tmp"))


def test_save_is_atomic_and_leaves_no_temporary_file(built, clock):
    path, _ = built
    assert not list(path.parent.glob(".*.tmp"))
    with open_service(path, clock) as service:
        ready(service)
        ann = service.index.ann_file
        loaded = ann.load()
        ann.save(loaded.index, loaded.seqs, loaded.header["records_version"])
        again = ann.load()
        assert np.array_equal(again.seqs, loaded.seqs) and again.header == loaded.header
    assert not list(path.parent.glob(".*.tmp"))


def _save_forever(path: str, started) -> None:
    """Child process: open the store and rewrite its index file in a loop until killed."""
    from memory_core import FixedClock

    service = MemoryService.open(path, settings_for(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    service.index.backend.wait_until_built(120)
    ann = service.index.ann_file
    loaded = ann.load()
    started.set()
    while True:
        ann.save(loaded.index, loaded.seqs, loaded.header["records_version"])


def test_a_writer_killed_mid_save_leaves_a_valid_file_and_its_temporary_file_is_cleaned_up(built, clock):
    import multiprocessing
    import os
    import random
    import signal
    import time

    path, answers = built
    ivf = path.with_name(path.name + ".ivf")
    context = multiprocessing.get_context("spawn")
    for _ in range(3):
        started = context.Event()
        child = context.Process(target=_save_forever, args=(str(path), started))
        child.start()
        assert started.wait(120)
        time.sleep(random.uniform(0.0, 0.05))
        os.kill(child.pid, signal.SIGKILL)
        child.join()
        assert AnnFile(ivf, {}, lambda v: None).load() is not None  # the old file or a whole new one, never half
    with open_service(path, clock) as service:
        info = ready(service)
        assert info["from_file"] is True
        assert searches(service) == answers
        loaded = service.index.ann_file.load()
        service.index.ann_file.save(loaded.index, loaded.seqs, loaded.header["records_version"])
    assert not list(path.parent.glob(".*.tmp"))  # what the killed writers left was removed
