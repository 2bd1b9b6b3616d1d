"""Where a file is meant, a URL is refused and nothing is created; a real path holding ``?``, ``#``
or ``%`` opens that file, never another one.

The incident: under the PostgreSQL test run, ``open_demo(Path(service.store.path))`` built SQLite
stores at ``./postgresql:/postgres:@/t_…?host=…`` (``Path`` had eaten a slash of the URL), and an
unescaped ``file:{path}?mode=ro`` created an empty ``./postgresql:/postgres:@/t_…`` beside them;
both were committed.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory_core import FixedClock, MemoryService
from memory_core.cli import main
from memory_core.errors import InvalidInputError
from memory_core.settings import default_settings
from memory_core.store.backup import backup_store, check_backup
from memory_core.store.db import Store
from tests.fakes import HashingEmbedder
from tests.helpers import write

URL = "postgresql://postgres:@/t_4307df422b9f4dd3?host=/tmp/agent-memory-pg-vxzti6sl"
MANGLED = str(Path(URL))  # what Path() makes of it: postgresql:/postgres:@/t_…
NOT_FILES = [URL, MANGLED, "sqlite:///var/memory.sqlite", "file:memory.sqlite?mode=ro"]


def _everything(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def here(tmp_path, monkeypatch):
    """An empty working directory: whatever a refused call would have created lands here."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


def _service(path):
    return MemoryService.open(path, default_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())


@pytest.mark.parametrize("target", NOT_FILES, ids=["url", "url-after-Path", "sqlite-url", "file-uri"])
def test_a_url_where_a_file_is_meant_is_refused_and_creates_nothing(here, tmp_path, target):
    from memory_core.app_launch import serve
    from memory_core.demo import build_demo_store
    from memory_core.hostmem.bundle import load_bundle
    from memory_core.notebook import open_demo
    from memory_core.notebook.demo import scratch_copy
    from memory_core.notebook.launcher import AdminApp

    store = tmp_path / "real.sqlite"
    with _service(store) as svc:
        calls = {
            "open_demo": lambda: open_demo(target, embedder=HashingEmbedder(), progress=None),
            "scratch_copy": lambda: scratch_copy(target),
            "build_demo_store": lambda: build_demo_store(target, embedder=HashingEmbedder()),
            "backup destination": lambda: backup_store(store, target),
            "snapshot": lambda: svc.snapshot(target),
            "restore": lambda: svc.restore(target),
            "check_backup": lambda: check_backup(target),
            "fitness bundle": lambda: load_bundle(target),
        }
        if target != URL:  # a real postgresql:// URL is a store target; everything else is no file
            calls["admin app"] = lambda: AdminApp(target)
            calls["Store.open"] = lambda: Store.open(target, "2026-03-05T10:00:00Z")
            calls["MemoryService.open"] = lambda: _service(target)
            calls["serve"] = lambda: serve(target, 8501, False, "127.0.0.1", execute=False)
        for name, call in calls.items():
            with pytest.raises(InvalidInputError) as caught:
                call()
            assert "URL" in caught.value.message, (name, caught.value.message)
            assert _everything(here) == [], name


@pytest.mark.parametrize("argv", [["seed-demo", "--path", MANGLED], ["backup", URL, "--path", "{store}"],
                                  ["init", "--path", MANGLED], ["doctor", "--path", MANGLED], ["stats", "--path", MANGLED],
                                  ["migrate-store", "{store}", MANGLED], ["calibrate", "--json", URL]],
                         ids=lambda a: a[0])
def test_the_commands_refuse_a_url_as_a_file_in_one_line(here, tmp_path, argv, capsys):
    store = tmp_path / "real.sqlite"
    _service(store).close()
    code = main([a.format(store=store) for a in argv])
    out, err = capsys.readouterr()
    assert code in (1, 2), (out, err)
    text = out if argv[0] == "doctor" else err
    assert "is a URL" in text and "Traceback" not in out + err
    assert _everything(here) == []


ODD = ["a?b", "x#y", "100%41", "sp ace?#%25"]


@pytest.mark.parametrize("odd", ODD)
def test_a_path_with_uri_characters_opens_that_file_and_no_other(tmp_path, odd, capsys):
    from memory_core.notebook.demo import scratch_copy
    from memory_core.notebook.launcher import is_demo_store

    folder = tmp_path / odd
    folder.mkdir()
    path = folder / "memory.sqlite"
    with _service(path) as svc:
        svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
        write(svc.start_session(agent_id="assistant", user_id="alice"), "The user grows tomatoes.", attribute="garden")
        svc.store.set_meta("demo_now", "2026-03-05T10:00:00.000000Z")
    backup = tmp_path / f"{odd}.backup.sqlite"
    info = backup_store(path, backup)
    assert info.records == 1 and check_backup(backup).records == 1
    assert main(["doctor", "--path", str(path)]) == 0
    assert main(["grants", "--path", str(path)]) == 0 and "user:alice" in capsys.readouterr().out
    copy = tmp_path / f"{odd}.copy.sqlite"
    assert main(["migrate-store", str(path), str(copy)]) == 0
    assert "verified: every table matches" in capsys.readouterr().out
    assert main(["restore", str(backup), "--path", str(copy), "--yes"]) == 0
    assert is_demo_store(path)
    scratch = Store.open_readonly(scratch_copy(path))
    assert scratch.get_meta("demo_now") == "2026-03-05T10:00:00.000000Z"
    scratch.close()
    with _service(copy) as svc:
        assert svc.stats()["records"] == 1
    conn = sqlite3.connect(path)  # the store itself, read without any URI
    assert conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 1
    conn.close()
    expected = {odd, f"{odd}.backup.sqlite", f"{odd}.copy.sqlite"}
    stray = {p.name for p in tmp_path.iterdir()} - expected
    assert not {n for n in stray if not n.startswith(tuple(expected))}, stray  # nothing opened by a cut-off name
