"""Worker processes for the many-writers test (importable, so ``spawn`` can start them)."""

from __future__ import annotations

CLAIMS = 6


def writer(url: str, worker: int, writes: int, workers: int, barrier, results) -> None:
    """Write ``writes`` records (searching between writes), wait for every worker, then look for
    each other worker's last record with one search each; report what was found."""
    from memory_core import FixedClock, MemoryService
    from memory_core.settings import default_settings
    from tests.fakes import HashingEmbedder

    settings = default_settings(retrieval={"lexical_max_df_share": 1.0})
    svc = MemoryService.open(url, settings, clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    try:
        session = svc.start_session(agent_id=f"w{worker}", user_id="team", project_id="shared")
        written = []
        for i in range(writes):
            result = session.call_tool("memory_write", {"type": "semantic", "target": "current_project", "about": "shared",
                                                        "about_kind": "project", "content": f"Worker {worker} logged codeword w{worker}x{i} today."})
            assert result["ok"], result
            written.append(result["record_id"])
            session.call_tool("memory_search", {"query": f"codeword w{(worker + 1) % workers}x{i}"})
        same = []
        for claim in range(CLAIMS):  # every worker writes the same claim at the same moment
            barrier.wait(timeout=300)
            result = session.call_tool("memory_write", {
                "type": "semantic", "target": "current_project", "about": "shared", "about_kind": "project",
                "attribute": f"launch_{claim}", "content": f"The shared project's launch {claim} is on Monday."})
            assert result["ok"], result
            same.append(result["record_id"])
        barrier.wait(timeout=300)
        seen = {}
        for other in range(workers):
            found = session.call_tool("memory_search", {"query": f"codeword w{other}x{writes - 1}"})
            seen[other] = [r["content"] for r in found.get("results", [])]
        results.put({"worker": worker, "written": written, "same": same, "seen": seen})
    except BaseException as exc:  # reported to the parent, which fails the test with it
        results.put({"worker": worker, "error": repr(exc)})
        barrier.abort()
    finally:
        svc.close()


def hold_write_lock(url: str, ready) -> None:
    """Open a write transaction, write half of something, then hang (the parent kills -9 this process)."""
    import time

    from memory_core.store.backend import open_store

    store = open_store(url, "2026-03-05T10:00:00Z")
    with store.transaction() as conn:
        store.append_event(conn, at="2026-03-05T10:00:00Z", kind="half.written", actor="doomed")
        # A statement sent now: BEGIN and the whole-store lock travel with it (they are queued until
        # the transaction's first statement), so the server holds the lock and a half-written row.
        conn.execute("INSERT INTO store_meta (key, value) VALUES ('half.written', '1')")
        ready.set()
        time.sleep(600)


def live_writer(target: str, worker: int, stop, progress) -> None:
    """Until ``stop`` is set, write records that each mention a new person (a record, an entity, an
    alias and a link in one transaction, plus events and a write-log row); after each commit put
    the record's id on ``progress``. Any failure is put there too, as ``{"error": ...}``, and
    ``{"done": True}`` last (read the queue up to it: a process exits only once its queue is read)."""
    from memory_core import FixedClock, MemoryService
    from memory_core.settings import default_settings
    from tests.fakes import HashingEmbedder

    try:
        svc = MemoryService.open(target, default_settings(), clock=FixedClock("2026-03-05T10:00:00Z"),
                                 embedder=HashingEmbedder())
    except BaseException as exc:
        progress.put({"worker": worker, "error": repr(exc)})
        progress.put({"worker": worker, "done": True})
        return
    try:
        session = svc.start_session(agent_id=f"w{worker}", user_id="team", project_id="shared")
        i = 0
        while not stop.is_set():
            name = f"Visitor{worker}n{i}"
            result = session.call_tool("memory_write", {
                "type": "semantic", "target": "current_project", "about": "shared", "about_kind": "project",
                "content": f"Worker {worker} met {name} at the depot on visit {i}.", "mentions": [name],
                "attribute": f"visit_{worker}_{i}"})
            if not result["ok"]:
                raise AssertionError(result)
            progress.put({"worker": worker, "record_id": result["record_id"]})
            i += 1
    except BaseException as exc:
        progress.put({"worker": worker, "error": repr(exc)})
    finally:
        svc.close()
        progress.put({"worker": worker, "done": True})  # the parent reads up to here, so this process can exit


def migrate_and_hang(source: str, destination: str) -> None:
    """Run ``migrate-store`` and stop for good once the records are copied (the parent kills -9 this
    process): say "copying" on stdout when it gets there."""
    import sys
    import threading

    import memory_core.store.transfer as transfer
    from memory_core.cli import main

    rows = transfer._rows

    def hang_before_links(store, table, columns, order):
        if table == "record_entities":
            print("copying", flush=True)
            threading.Event().wait()
        return rows(store, table, columns, order)

    transfer._rows = hang_before_links
    sys.exit(main(["migrate-store", source, destination]))
