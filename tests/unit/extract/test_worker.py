import io
import threading

from memory_core.errors import ExternalServiceError
from memory_core.extract.runner import ExtractionRunner
from memory_core.extract.worker import run_worker
from tests.unit.extract.helpers import ended_session, records


def test_worker_once_runs_maintenance_and_every_due_run(service, alice, clock):
    alice.call_tool("memory_write", {"type": "semantic", "content": "The user probably likes jazz."})
    first = ended_session(service, [("user", "I prefer tea.")])[1]
    second = ended_session(service, [("user", "I live in Oslo.")])[1]
    clock.advance(days=31)
    out = io.StringIO()
    assert run_worker(service.extraction, once=True, worker_id="w1", out=out) == 0
    assert {r["id"]: r["status"] for r in service.extraction_runs()} == {first: "succeeded", second: "succeeded"}
    assert len(records(service, status="expired")) == 1
    log = out.getvalue()
    assert "1 expired" in log and f"run {first}" in log and f"run {second}" in log


def test_worker_once_exits_1_when_an_attempt_failed(service, alice):
    class Down:
        name = "down"

        def extract(self, transcript):
            raise ExternalServiceError("down", kind="api_error")

    service.extraction = ExtractionRunner(service.extraction_deps(), extractor=Down())
    ended_session(service, [("user", "I prefer tea.")])
    assert run_worker(service.extraction, once=True, worker_id="w1", out=None) == 1


def test_worker_loop_stops_when_asked(service, alice):
    stop = threading.Event()
    stop.set()
    assert run_worker(service.extraction, worker_id="w1", stop=stop, out=None) == 0


def test_handle_event_session_ended_enqueues_a_run_the_worker_processes(service):
    service.grant("assistant", "user:dana", read=True, write=True, actor="test")
    started = service.handle_event({"type": "session_started", "agent_id": "assistant", "user_id": "dana"})
    service.handle_event({"type": "turn_completed", "session_id": started["session_id"], "role": "user", "content": "I work at Initech."})
    ended = service.handle_event({"type": "session_ended", "session_id": started["session_id"]})
    assert run_worker(service.extraction, once=True, worker_id="w1", out=None) == 0
    assert service.extraction_run(ended["extraction_run_id"]).status == "succeeded"
    assert [r["content"] for r in records(service, source_kind="user_statement")] == ["The user works at Initech."]
