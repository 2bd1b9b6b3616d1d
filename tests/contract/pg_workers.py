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
        ready.set()
        time.sleep(600)
