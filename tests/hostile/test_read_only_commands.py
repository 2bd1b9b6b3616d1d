"""Commands that only look never create or migrate a store, and a restore never empties one by surprise.

The incident: ``doctor`` on a zero-length file made an empty store in it (exit 0); ``restore --yes``
from that file then replaced a real store with nothing.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from memory_core import FixedClock, MemoryService
from memory_core.cli import main
from memory_core.settings import default_settings
from memory_core.store.db import Store
from memory_core.store.migrations import MIGRATIONS
from tests.fakes import HashingEmbedder
from tests.helpers import write

LOOKING = (["doctor"], ["stats"], ["grants"], ["fitness", "show"])
# commands that change a store they are given, but must never make one at a mistyped path
CHANGING = (["grant", "assistant", "user:alice"], ["revoke", "assistant", "user:alice"], ["reembed"],
            ["worker", "--once"], ["fitness", "run"])


def _real_store(path: Path, n: int = 3) -> Path:
    svc = MemoryService.open(path, default_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
    session = svc.start_session(agent_id="assistant", user_id="alice")
    for i in range(n):
        write(session, f"The user keeps bees in hive number {i}.", attribute=f"hive_{i}")
    svc.close()
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _records(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("command", LOOKING + CHANGING, ids=lambda c: " ".join(c))
def test_a_looking_command_on_an_empty_file_reports_it_and_leaves_it_empty(tmp_path, command, capsys):
    empty = tmp_path / "memory.sqlite"
    empty.touch()
    assert main(command + ["--path", str(empty)]) == 1
    out, err = capsys.readouterr()
    assert "empty file (0 bytes)" in out + err and "Traceback" not in out + err
    assert empty.stat().st_size == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["memory.sqlite"]


@pytest.mark.parametrize("command", LOOKING + CHANGING, ids=lambda c: " ".join(c))
def test_a_looking_command_on_a_missing_path_creates_nothing(tmp_path, command, capsys):
    missing = tmp_path / "typo" / "memory.sqlite"
    assert main(command + ["--path", str(missing)]) == 1
    out, err = capsys.readouterr()
    assert "no store at" in out + err
    assert not missing.parent.exists()


def test_doctor_and_stats_do_not_migrate_an_older_store(tmp_path, capsys):
    path = _real_store(tmp_path / "memory.sqlite")
    newest = max(MIGRATIONS)
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM schema_migrations WHERE number = ?", (newest,))  # as code before that migration left it
    conn.commit()
    conn.close()
    before = _sha(path)
    assert main(["doctor", "--path", str(path)]) == 0  # a warning, not a failure
    assert f"migrations [{newest}] not applied yet" in capsys.readouterr().out
    assert main(["stats", "--path", str(path)]) == 1
    assert f"lacks migrations [{newest}]" in capsys.readouterr().err
    assert _sha(path) == before
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM schema_migrations WHERE number = ?", (newest,)).fetchone()[0] == 0
    conn.close()


def test_the_incident_doctor_then_restore_from_an_empty_file_keeps_the_real_store(tmp_path, capsys):
    real = _real_store(tmp_path / "real.sqlite")
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    assert main(["doctor", "--path", str(empty)]) == 1
    assert empty.stat().st_size == 0
    before = _sha(real)
    assert main(["restore", str(empty), "--path", str(real), "--yes"]) == 2
    assert "empty file (0 bytes)" in capsys.readouterr().err
    assert _sha(real) == before and _records(real) == 3


def test_restore_refuses_a_backup_without_records_unless_told_and_says_what_is_lost(tmp_path, capsys):
    real = _real_store(tmp_path / "real.sqlite")
    hollow = tmp_path / "hollow.sqlite"
    Store.open(hollow, "2026-03-05T10:00:00Z").close()  # a valid store holding nothing
    before = _sha(real)
    assert main(["restore", str(hollow), "--path", str(real), "--yes"]) == 2
    err = capsys.readouterr().err
    assert "holds no records" in err and "--allow-empty" in err
    assert _sha(real) == before
    assert main(["restore", str(hollow), "--path", str(real), "--allow-empty"]) == 2  # still asks for --yes
    err = capsys.readouterr().err
    assert "now holds 3 records (3 live), " in err and "1 grants" in err and "all of it is replaced" in err
    assert "the backup" in err and "holds 0 records" in err and "without --yes" in err
    assert _sha(real) == before
    assert main(["restore", str(hollow), "--path", str(real), "--allow-empty", "--yes"]) == 0
    assert _records(real) == 0


def _newer(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_migrations (number, name, applied_at) VALUES (9999, 'future', 'x')")
    conn.commit()
    conn.close()
    return path


def _truncated(path: Path) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def _foreign(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, caption TEXT)")
    conn.execute("INSERT INTO photos (caption) VALUES ('beach')")
    conn.commit()
    conn.close()
    return path


def _unfinished_copy(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO store_meta (key, value) VALUES ('migrate_store_incomplete', 'copy from x started at y')")
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("spoil, said", [(_newer, "newer than this code"), (_truncated, "is not a usable backup: it is damaged"),
                                         (_foreign, "not an agent-memory"), (_unfinished_copy, "unfinished migrate-store")],
                         ids=["newer schema", "truncated", "another program's database", "unfinished copy"])
def test_restore_checks_the_backup_before_touching_the_store(tmp_path, spoil, said, capsys):
    real = _real_store(tmp_path / "real.sqlite")
    backup = _real_store(tmp_path / "backup.sqlite", n=5) if spoil is not _foreign else _foreign(tmp_path / "backup.sqlite")
    if spoil is not _foreign:
        spoil(backup)
    before = _sha(real)
    assert main(["restore", str(backup), "--path", str(real), "--yes"]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1
    assert _sha(real) == before and _records(real) == 3


def test_restore_never_overwrites_another_programs_database(tmp_path, capsys):
    backup = _real_store(tmp_path / "backup.sqlite")
    other = _foreign(tmp_path / "photos.sqlite")
    before = _sha(other)
    assert main(["restore", str(backup), "--path", str(other), "--yes"]) == 1
    assert "not an agent-memory store" in capsys.readouterr().err
    assert _sha(other) == before


def test_opening_another_programs_database_writes_nothing_into_it(tmp_path):
    from memory_core.errors import StoreUnusableError

    other = _foreign(tmp_path / "photos.sqlite")
    before = _sha(other)
    with pytest.raises(StoreUnusableError, match="not an agent-memory store"):
        MemoryService.open(other, default_settings(), embedder=HashingEmbedder())
    assert _sha(other) == before
