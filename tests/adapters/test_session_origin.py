"""Sessions remember which adapter and trigger mode opened them, and the admin app lists both."""

import pytest

from memory_core.adapters import Identity, MemoryRuntime
from memory_core.errors import InvalidInputError


def test_adapter_sessions_record_framework_and_trigger_mode(service):
    # the admin app's dependencies (streamlit, argon2) live in the main venv only
    ended_sessions = pytest.importorskip("admin_ui.data.extraction", reason="the admin app is not installed here").ended_sessions
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    runtime = MemoryRuntime(service, framework="crewai", trigger_mode="auto")
    runtime.open(Identity("assistant", "alice", "ses-crew"))
    runtime.end("ses-crew")
    direct = service.start_session(agent_id="assistant", user_id="alice", session_id="ses-direct")
    direct.end()
    listed = {row["session_id"]: row for row in ended_sessions(service).items}
    assert (listed["ses-crew"]["framework"], listed["ses-crew"]["trigger_mode"]) == ("crewai", "auto")
    assert (listed["ses-direct"]["framework"], listed["ses-direct"]["trigger_mode"]) == (None, None)
    started = service.store.query_one("SELECT payload FROM events WHERE kind = 'session.started' AND payload LIKE '%ses-crew%'")
    assert '"framework":"crewai"' in started["payload"]


def test_an_unknown_trigger_mode_is_refused_before_anything_is_written(service):
    with pytest.raises(InvalidInputError):
        service.start_session(agent_id="assistant", user_id="alice", session_id="s1", trigger_mode="sometimes")
    with pytest.raises(InvalidInputError):
        MemoryRuntime(service, framework="crewai", trigger_mode="sometimes")
    assert service.store.scalar("SELECT COUNT(*) FROM sessions") == 0


def test_the_default_trigger_mode_comes_from_settings(tmp_path, clock):
    from memory_core import MemoryService, load_settings
    from tests.fakes import HashingEmbedder

    settings = load_settings(adapters={"trigger_mode": "hybrid"})
    with MemoryService.open(tmp_path / "m.sqlite", settings, clock=clock, embedder=HashingEmbedder()) as service:
        assert MemoryRuntime(service, framework="x").trigger_mode == "hybrid"
        assert MemoryRuntime(service, framework="x", trigger_mode="auto").trigger_mode == "auto"
