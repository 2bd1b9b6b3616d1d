"""A real store, damaged in each way a disk, a copy or a person damages one: ``doctor`` reports it
(exit 1), every command ends in one line naming the file (never a traceback), ``MemoryService.open``
raises ``StoreUnusableError`` with the path, and none of them changes a byte of what it found."""

from __future__ import annotations

import hashlib
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.cli import main
from memory_core.errors import StoreUnusableError
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder
from tests.helpers import write

KINDS = ("truncated", "header_overwritten", "flipped_bytes", "garbage", "not_sqlite", "wal_of_another_db", "directory")


def _build(path: Path, embedder, words: str, n: int) -> None:
    svc = MemoryService.open(path, default_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=embedder)
    svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
    session = svc.start_session(agent_id="assistant", user_id="alice")
    for i in range(n):
        write(session, f"The user {words} note {i}: the {words} lab meets on day {i % 7} at room {100 + i}.", attribute=f"note_{i}")
    session.call_tool("memory_search", {"query": f"{words} lab"})
    svc.close()


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    """A store built with the configured (packaged MiniLM) embedder, so every command can open it."""
    from memory_core.service.embedders import shared_embedder

    path = tmp_path_factory.mktemp("healthy") / "memory.sqlite"
    _build(path, shared_embedder(load_settings().embedder), "harbour", 60)
    return path


def _other_wal(tmp: Path) -> bytes:
    """The WAL of another store, taken at a commit while its writer still had it open."""
    other = tmp / "other.sqlite"
    _build(other, HashingEmbedder(), "meadow", 20)
    conn = sqlite3.connect(other, isolation_level=None)
    conn.execute("PRAGMA wal_autocheckpoint=0")
    for i in range(30):
        conn.execute("INSERT INTO store_meta (key, value) VALUES (?, ?)", (f"k{i}", "v" * 500))
        conn.execute("UPDATE records SET content = content || ' (edited)'")
    data = Path(f"{other}-wal").read_bytes()
    conn.close()
    return data


def damage(healthy: Path, tmp: Path, kind: str) -> Path:
    """A copy of the healthy store at ``tmp/<kind>/memory.sqlite``, damaged as ``kind`` says."""
    path = tmp / kind / "memory.sqlite"
    path.parent.mkdir(parents=True)
    if kind == "directory":
        path.mkdir()
        (path / "memory.sqlite").write_bytes(healthy.read_bytes())
        return path
    data = bytearray(healthy.read_bytes())
    if kind == "truncated":
        data = data[: len(data) // 3 + 100]
    elif kind == "header_overwritten":
        data[:100] = bytes(100)
    elif kind == "flipped_bytes":  # the first bytes of every page of the records table
        conn = sqlite3.connect(healthy)
        pages = [r[0] for r in conn.execute("SELECT pageno FROM dbstat WHERE name = 'records'")]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        conn.close()
        assert len(pages) > 3
        for page in pages:
            start = (page - 1) * page_size
            for i in range(start, start + 16):
                data[i] ^= 0xFF
    elif kind == "garbage":
        data = bytearray(random.Random(7).randbytes(len(data)))
    elif kind == "not_sqlite":
        data = bytearray(b'{"notes": "this is a JSON export, not a store"}\n' * 200)
    elif kind == "wal_of_another_db":
        Path(f"{path}-wal").write_bytes(_other_wal(tmp))
    path.write_bytes(bytes(data))
    return path


def _fingerprint(path: Path) -> dict[str, str]:
    """SHA-256 of the store file and of every non-empty file beside it (its -wal above all)."""
    if path.is_dir():
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in path.iterdir()}
    out = {}
    for p in path.parent.iterdir():
        if p.name.startswith(path.name) and p.is_file() and p.stat().st_size and not p.name.endswith("-shm"):
            out[p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_doctor_reports_the_damage_and_exits_1(healthy, tmp_path, kind, capsys):
    path = damage(healthy, tmp_path, kind)
    before = _fingerprint(path)
    assert main(["doctor", "--path", str(path)]) == 1
    out, err = capsys.readouterr()
    assert "PROBLEMS FOUND" in out and "Traceback" not in out + err
    failed = [line for line in out.splitlines() if "[fail]" in line]
    assert failed, out
    if kind != "directory":
        assert "backup" in out  # says what to do
    assert main(["doctor", "--path", str(path), "--json"]) == 1
    assert '"ok": false' in capsys.readouterr().out
    assert _fingerprint(path) == before


COMMANDS = (
    ["stats"], ["grants"], ["init"], ["grant", "helper", "user:alice"], ["revoke", "assistant", "user:alice"],
    ["prune-logs"], ["reembed"], ["worker", "--once"], ["fitness", "show"], ["backup", "{tmp}/backup.sqlite"],
    ["migrate-store", "{path}", "{tmp}/copy.sqlite"],
)


# With only the records table's pages damaged, these two never read a bad page and do their work.
READ_NO_RECORDS = {"grants", "prune-logs"}


@pytest.mark.parametrize("kind", KINDS)
def test_every_command_ends_in_one_line_and_changes_nothing(healthy, tmp_path, kind, capsys):
    path = damage(healthy, tmp_path, kind)
    before = _fingerprint(path)
    for command in COMMANDS:
        argv = [a.format(tmp=tmp_path, path=path) for a in command]
        if "migrate-store" not in argv:
            argv += ["--path", str(path)]
        code = main(argv)
        out, err = capsys.readouterr()
        if kind == "flipped_bytes" and argv[0] in READ_NO_RECORDS:  # the damage is where they never read
            assert code == 0 and err == "", (argv, out, err)
            if argv[0] == "grants":
                assert _fingerprint(path) == before  # read-only
            before = _fingerprint(path)  # prune-logs pruned the old search log, as it should
            continue
        assert code == 1, (argv, out, err)
        lines = [line for line in err.strip().splitlines() if not line.startswith("copied ")]  # migrate-store's progress
        assert len(lines) == 1 and lines[0].startswith("error [store_unusable]") and str(path) in lines[0], (argv, err)
        assert _fingerprint(path) == before, argv
    assert not (tmp_path / "backup.sqlite").exists() and not (tmp_path / "copy.sqlite").exists()


@pytest.mark.parametrize("read_only", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_open_raises_the_librarys_error_naming_the_file(healthy, tmp_path, kind, read_only):
    path = damage(healthy, tmp_path, kind)
    before = _fingerprint(path)
    with pytest.raises(StoreUnusableError) as caught:
        MemoryService.open(path, load_settings(), read_only=read_only)
    error = caught.value
    assert error.path == str(path) and str(path) in error.message
    assert error.problem == ("not_a_store" if kind == "directory" else "damaged")
    if kind != "directory":
        assert "restore it from a backup" in error.message
    assert _fingerprint(path) == before


def test_restore_puts_a_backup_in_place_of_a_damaged_store_and_keeps_the_damaged_file(healthy, tmp_path, capsys):
    backup = tmp_path / "backup.sqlite"
    assert main(["backup", str(backup), "--path", str(healthy)]) == 0
    capsys.readouterr()
    path = damage(healthy, tmp_path, "wal_of_another_db")
    damaged_bytes = path.read_bytes()
    assert main(["restore", str(backup), "--path", str(path)]) == 2  # without --yes: says what it found, changes nothing
    err = capsys.readouterr().err
    assert "cannot be read (damaged)" in err and "60 records" in err and path.read_bytes() == damaged_bytes
    assert main(["restore", str(backup), "--path", str(path), "--yes"]) == 0
    capsys.readouterr()
    kept = [p for p in path.parent.iterdir() if ".damaged-" in p.name]
    assert {p.name.rsplit("-", 1)[-1] for p in kept} >= {"wal"}  # the foreign WAL went aside with its file
    assert any(p.read_bytes() == damaged_bytes for p in kept)
    assert main(["doctor", "--path", str(path)]) == 0
    with MemoryService.open(path, load_settings()) as service:
        assert service.stats()["records"] == 60
