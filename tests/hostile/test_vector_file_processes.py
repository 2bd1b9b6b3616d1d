"""The vector file against other processes: a writer killed with -9 mid-file, records written by
another process while a store opens from the file, and a forget committed while another process is
writing the file. Searches stay right, nothing crashes, and no file keeps a forgotten vector.

The children are synchronised on lines they print (never on sleeps): a child that must be killed
mid-write blocks on its stdin inside the write's progress callback after saying how far it got."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.unit.index.test_vector_file import fill, loaded_from_rows, open_service, state, vectors_path

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = textwrap.dedent(
    """
    import sys
    from memory_core import FixedClock, MemoryService
    from memory_core.settings import default_settings
    from tests.fakes import HashingEmbedder
    service = MemoryService.open(sys.argv[1], default_settings(retrieval={"vector_file_min_records": 5}),
                                 clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    keeper = service.index.keeper
    keeper.file.chunk_rows = 4
    """
)

KILLED_WRITER = PRELUDE + textwrap.dedent(
    """
    session = service.start_session(agent_id="a", user_id="u")
    for i in range(3):
        assert session.call_tool("memory_write", {"type": "semantic", "content": f"u keeps kumquats in crate {900 + i}.",
                                                  "attribute": f"crate_{900 + i}"})["ok"]
    stop_at = int(sys.argv[2])

    def progress(done, total):
        if done >= stop_at:
            print(f"written {done} of {total}", flush=True)
            sys.stdin.readline()  # killed here

    keeper.write_now(progress)
    print("finished", flush=True)
    """
)


@pytest.fixture
def saved(tmp_path, clock):
    path = tmp_path / "m.sqlite"
    with open_service(path, clock) as service:
        fill(service, "u", 30)
        fill(service, "other", 10)
        assert service.index.keeper.write_now()["written"]
    return path


def _child(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("stop_at", [4, 20, 43], ids=["first chunk", "half", "every row, no trailer yet"])
def test_a_writer_killed_mid_file_leaves_the_old_file_and_the_next_open_is_right(saved, clock, stop_at):
    path = vectors_path(saved)
    old = path.read_bytes()
    child = _child(KILLED_WRITER, saved, stop_at)
    line = child.stdout.readline()
    assert line.startswith("written "), line
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert path.read_bytes() == old  # the rename never happened
    partial = list(saved.parent.glob(f".{path.name}.{child.pid}-*.tmp"))
    assert len(partial) == 1 and partial[0].stat().st_size < len(old) + 3 * 256
    with open_service(saved, clock) as service:
        keeper = service.index.keeper
        assert keeper.last_load["used"] is True and keeper.last_load["changes_since"] == 3  # the old file plus the feed
        assert state(service.index) == loaded_from_rows(saved, clock)
        hit = service.search(agent_id="a", user_id="u", query="u keeps kumquats in crate 901").results[0]
        assert hit.record.content == "u keeps kumquats in crate 901."
        assert keeper.write_now()["written"]
    assert not partial[0].exists()  # the dead writer's temporary file was cleaned up by the next writer


WRITER = PRELUDE + textwrap.dedent(
    """
    session = service.start_session(agent_id="a", user_id="u")
    for i in range(int(sys.argv[2])):
        made = session.call_tool("memory_write", {"type": "semantic", "content": f"u keeps quinces in bin {700 + i}.",
                                                  "attribute": f"bin_{700 + i}"})
        assert made["ok"], made
        if i % 4 == 3:
            keeper.write_now()  # and replaces the file now and then, while the other process opens it
        print(made["record_id"], f"u keeps quinces in bin {700 + i}.", flush=True)
    print("done", flush=True)
    """
)


def test_opens_while_another_process_writes_see_every_committed_record(saved, clock):
    child = _child(WRITER, saved, 16)
    committed: list[tuple[str, str]] = []
    opens = 0
    for line in child.stdout:
        if line.strip() == "done":
            break
        record_id, content = line.rstrip("\n").split(" ", 1)
        committed.append((record_id, content))
        if len(committed) in (2, 7, 12):
            with open_service(saved, clock) as service:  # the child keeps writing meanwhile
                opens += 1
                for wanted_id, text in committed:  # everything committed before this open began is found
                    response = service.search(agent_id="a", user_id="u", query=text)
                    assert response.results[0].record.id == wanted_id, (text, response.results[0].record.content)
                    dense = [hit["id"] for hit in response.trace.stage("dense").outputs["candidates"]]
                    assert dense[0] == wanted_id  # by its vector, not only by its words
    assert child.wait(timeout=60) == 0 and opens == 3
    with open_service(saved, clock) as service:
        assert state(service.index) == loaded_from_rows(saved, clock)


SLOW_WRITER = PRELUDE + textwrap.dedent(
    """
    said = False

    def progress(done, total):
        global said
        if not said:
            said = True
            print("writing", flush=True)
            sys.stdin.readline()  # the other process forgets a record now

    print(keeper.write_now(progress), flush=True)
    """
)


def test_a_forget_committed_while_another_process_writes_the_file_leaves_no_copy_of_the_vector(saved, clock):
    with open_service(saved, clock) as service:
        victim = service.search(agent_id="a", user_id="u", query="u keeps pears in crate 1").results[0].record
        vector = bytes(service.index.vectors([victim.seq])[0].tobytes())
    child = _child(SLOW_WRITER, saved)
    assert child.stdout.readline().strip() == "writing"  # its snapshot, taken before the forget, holds the vector
    with open_service(saved, clock) as service:
        service.forget(victim.id, actor="t", reason="user asked")
        child.stdin.write("go\n")
        child.stdin.flush()
        report = child.stdout.readline()
        assert child.wait(timeout=60) == 0
        assert "'written': False" in report and "forgotten" in report
        assert service.index.keeper.wait(60)
    for leftover in saved.parent.glob("*vectors*"):
        assert vector not in leftover.read_bytes(), leftover
    with open_service(saved, clock) as service:
        assert victim.seq not in state(service.index)
        assert state(service.index) == loaded_from_rows(saved, clock)
