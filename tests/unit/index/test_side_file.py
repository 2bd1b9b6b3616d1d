"""Files next to the store are replaced atomically, also by two threads of one process at once."""

import threading

from memory_core.index.side_file import remove_abandoned, write_atomically


def test_two_threads_writing_the_same_file_each_finish_and_leave_one_whole_file(tmp_path):
    target = tmp_path / "m.sqlite.vectors"
    both_writing = threading.Barrier(2, timeout=30)
    errors = []

    def writer(fill: bytes) -> None:
        def body(out) -> None:
            out.write(fill * 1000)
            both_writing.wait()  # the two temporary files exist at the same time
            out.write(fill * 1000)

        try:
            write_atomically(target, body)
        except Exception as exc:  # noqa: BLE001 - the test reports it
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(fill,)) for fill in (b"a", b"b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert target.read_bytes() in (b"a" * 2000, b"b" * 2000)
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_dead_writer_s_temporary_file_is_removed_and_a_live_one_kept(tmp_path):
    import os

    target = tmp_path / "m.sqlite.ivf"
    dead = tmp_path / f".{target.name}.{2**22 + 12345}-deadbeef.tmp"  # above pid_max: no such process
    older = tmp_path / f".{target.name}.{2**22 + 12346}.tmp"  # the name format before issue 31
    live = tmp_path / f".{target.name}.{os.getpid()}-cafe0000.tmp"
    for path in (dead, older, live):
        path.write_bytes(b"partial")
    remove_abandoned(target)
    assert not dead.exists() and not older.exists() and live.exists()
