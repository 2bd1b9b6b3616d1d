"""Another process changing the store under a searching one (test_pg_matrix.py), importable so
``spawn`` can start it. Each call opens its own service, makes one change as agent ``assistant``
for user ``alice`` and exits; a failure is the process's exit code (the parent asserts 0)."""

from __future__ import annotations

NOW = "2026-03-05T10:00:00Z"


def _session(url: str):
    from memory_core import FixedClock, MemoryService
    from memory_core.settings import default_settings
    from tests.fakes import HashingEmbedder

    svc = MemoryService.open(url, default_settings(postgres={"dense_search": "sql"}), clock=FixedClock(NOW),
                             embedder=HashingEmbedder())
    return svc, svc.start_session(agent_id="assistant", user_id="alice")


def change(url: str, action: str, record_id: str | None, content: str | None) -> None:
    """``write`` ``content``, ``forget`` ``record_id`` or ``revise`` it to ``content``."""
    svc, session = _session(url)
    try:
        if action == "write":
            result = session.call_tool("memory_write", {"type": "semantic", "content": content, "attribute": "boat"})
        elif action == "forget":
            result = session.call_tool("memory_forget", {"record_id": record_id, "reason": "asked"})
        elif action == "revise":
            result = session.call_tool("memory_revise", {"action": "update", "record_id": record_id, "content": content,
                                                         "reason": "corrected"})
        else:
            raise ValueError(action)
        assert result["ok"], result
    finally:
        svc.close()
