"""Worker processes for the scope-lock race tests (importable, so ``spawn`` can start them).

Each worker opens its own service on the store once, then runs one command per round: every
worker waits on the shared barrier, so the round's commands reach the server at the same moment.
"""

from __future__ import annotations

CLOCK = "2026-03-05T10:00:00Z"


def open_service(url: str):
    from memory_core import FixedClock, MemoryService
    from memory_core.settings import default_settings
    from tests.fakes import HashingEmbedder

    return MemoryService.open(url, default_settings(), clock=FixedClock(CLOCK), embedder=HashingEmbedder())


def race_worker(url: str, worker: int, commands, barrier, results) -> None:
    """Run commands from ``commands`` until ``None``: ``("write", args)`` calls ``memory_write`` with
    ``args``; ``("forget", record_id)`` and ``("merge", source, target)`` call the service, ``("noop",)`` only
    waits at the barrier. Each
    result (or the error) goes to ``results`` as ``(worker, outcome)``."""
    try:
        svc = open_service(url)
        session = svc.start_session(agent_id=f"w{worker}", user_id="team", project_id="shared")
    except BaseException as exc:  # reported to the parent, which fails the test with it
        results.put((worker, {"error": repr(exc)}))
        return
    try:
        while (command := commands.get(timeout=600)) is not None:
            barrier.wait(timeout=300)
            try:
                if command[0] == "noop":
                    outcome = {"ok": True}
                elif command[0] == "write":
                    outcome = session.call_tool("memory_write", command[1])
                elif command[0] == "forget":
                    outcome = {"ok": True, "forgotten": svc.forget(command[1], actor="t", reason="race test")}
                else:
                    svc.merge_entities(command[1], command[2], actor="t", reason="race test")
                    outcome = {"ok": True}
            except BaseException as exc:
                outcome = {"error": repr(exc)}
            results.put((worker, outcome))
    finally:
        svc.close()
