import json
import threading

import pytest

from memory_core import MemoryService
from memory_core.errors import ConflictError, ExternalServiceError
from memory_core.extract.runner import ExtractionRunner
from tests.fakes import HashingEmbedder
from tests.unit.extract.helpers import ScriptedExtractor, ended_session, records


def second_service(service, clock):
    """Another service (own SQLite connection, own vector index) on the same file, like another process."""
    return MemoryService.open(service.store.path, service.settings, clock=clock, embedder=HashingEmbedder())


class FailingExtractor:
    name = "failing"

    def extract(self, transcript):
        raise ExternalServiceError("the model is down", kind="api_error")


def test_two_workers_racing_process_each_run_exactly_once(service, alice, clock):
    run_ids = [ended_session(service, [("user", f"I live in City{i}.")])[1] for i in range(4)]
    other = second_service(service, clock)
    barrier = threading.Barrier(2)
    done: dict[str, list[str]] = {"a": [], "b": []}
    errors: list[BaseException] = []

    def work(svc, name):
        try:
            barrier.wait()
            while (detail := svc.run_extraction(worker_id=name)) is not None:
                done[name].append(detail.run["id"])
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(svc, name)) for svc, name in ((service, "a"), (other, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    other.close()
    assert not errors
    assert sorted(done["a"] + done["b"]) == sorted(run_ids)
    claims = service.store.scalar("SELECT COUNT(*) FROM events WHERE kind = 'extraction.claimed'")
    assert claims == 4
    assert {r["attempts"] for r in service.extraction_runs()} == {1}
    assert len(records(service, source_kind="session_summary")) == 4


def test_two_workers_racing_for_one_run_produce_one_result(service, alice, clock):
    _, run_id = ended_session(service, [("user", "I prefer tea.")])
    other = second_service(service, clock)
    barrier = threading.Barrier(2)
    results = []

    def work(svc, name):
        barrier.wait()
        results.append(svc.run_extraction(worker_id=name))

    threads = [threading.Thread(target=work, args=(svc, name)) for svc, name in ((service, "a"), (other, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    other.close()
    processed = [r for r in results if r is not None]
    assert len(processed) == 1 and processed[0].run["id"] == run_id
    assert len(records(service, source_kind="session_summary")) == 1
    assert len(records(service, content="The user prefers tea.")) == 1


def test_a_crashed_run_is_claimed_again_after_its_lease_expires(service, alice, clock):
    _, run_id = ended_session(service, [("user", "I prefer tea.")])
    runner = ExtractionRunner(service.extraction_deps())
    crashed = runner.claim("crashed-worker")  # claimed, then the process dies
    assert crashed.run_id == run_id and crashed.attempt == 1
    assert runner.claim("other") is None  # the lease still holds
    clock.advance(seconds=service.settings.extraction.claim_timeout_s + 1)
    detail = runner.run_next("other")
    assert detail.run["id"] == run_id and detail.status == "succeeded" and detail.run["attempts"] == 2
    assert [a["outcome"] for a in detail.attempts] == ["abandoned", "succeeded"]


def test_a_worker_that_lost_its_lease_cannot_finish_the_run(service, alice, clock):
    _, run_id = ended_session(service, [("user", "I prefer tea.")])
    runner = ExtractionRunner(service.extraction_deps())
    slow = runner.claim("slow")
    clock.advance(seconds=service.settings.extraction.claim_timeout_s + 1)
    assert runner.run_next("fast").status == "succeeded"
    assert runner.process(slow) == "lease_lost"
    assert len(records(service, source_kind="session_summary")) == 1
    assert len(records(service, content="The user prefers tea.")) == 1
    detail = service.extraction_run(run_id)
    assert detail.status == "succeeded"
    assert {a["attempt"]: a["outcome"] for a in detail.attempts} == {1: "lease_lost", 2: "succeeded"}


def test_run_now_refuses_a_run_another_worker_holds(service, alice):
    _, run_id = ended_session(service, [("user", "I prefer tea.")])
    ExtractionRunner(service.extraction_deps()).claim("busy")
    with pytest.raises(ConflictError):
        service.run_extraction(run_id)


def test_spent_attempts_fail_the_run_and_a_manual_retry_grants_one_more(tmp_path, clock):
    from memory_core import load_settings

    settings = load_settings(extraction={"max_attempts": 1})
    service = MemoryService.open(tmp_path / "m.sqlite", settings, clock=clock, embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    runner = ExtractionRunner(service.extraction_deps(), extractor=FailingExtractor())
    service.extraction = runner
    _, run_id = ended_session(service, [("user", "I prefer tea.")])
    detail = service.run_extraction(run_id)
    assert detail.status == "failed" and detail.run["error"].startswith("the model API failed (the model is down).")
    assert "That was the last of its 1 attempts (extraction.max_attempts); Retry in the app gives it one more." in detail.run["error"]
    assert service.run_extraction() is None
    runner.extractor = ScriptedExtractor([{"type": "semantic", "content": "The user prefers tea.", "evidence": "I prefer tea."}])
    detail = service.retry_extraction(run_id, actor="admin", run_now=True)
    assert detail.status == "succeeded" and detail.run["attempts"] == 2 and detail.run["attempt_limit"] == 2
    kinds = [e["kind"] for e in detail.events]
    assert kinds == ["extraction.enqueued", "extraction.claimed", "extraction.failed", "extraction.retry_requested", "extraction.claimed", "extraction.succeeded"]
    with pytest.raises(ConflictError):
        service.retry_extraction(run_id, actor="admin")
    service.close()


def test_a_running_run_whose_worker_died_on_its_last_attempt_ends_failed(tmp_path, clock):
    from memory_core import load_settings

    service = MemoryService.open(tmp_path / "m.sqlite", load_settings(extraction={"max_attempts": 1}), clock=clock,
                                 embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    _, run_id = ended_session(service, [("user", "I prefer tea.")])
    ExtractionRunner(service.extraction_deps()).claim("doomed")
    clock.advance(seconds=service.settings.extraction.claim_timeout_s + 1)
    assert service.run_extraction() is None
    assert service.extraction_run(run_id).status == "failed"
    service.close()


def test_ending_a_session_enqueues_through_the_one_enqueue_with_its_event(service, alice):
    run_id = alice.end()
    row = service.store.query_one("SELECT session_id, status, trigger FROM extraction_runs WHERE id = ?", (run_id,))
    assert dict(row) == {"session_id": alice.id, "status": "queued", "trigger": "session_end"}
    events = service.store.query("SELECT kind, actor, payload FROM events WHERE kind IN ('session.ended', 'extraction.enqueued') ORDER BY seq")
    assert [(e["kind"], e["actor"]) for e in events] == [("session.ended", "agent:assistant"), ("extraction.enqueued", "agent:assistant")]
    assert json.loads(events[1]["payload"]) == {"run_id": run_id, "session_id": alice.id, "trigger": "session_end"}


def test_an_uploaded_transcript_is_queued_once_with_the_uploaders_name(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    detail = service.extract_transcript(agent_id="assistant", user_id="alice", actor="admin:ops",
                                        turns=[{"role": "user", "content": "I prefer tea."}], run_now=False)
    assert detail.run["trigger"] == "upload" and detail.status == "queued"
    events = service.store.query("SELECT actor, payload FROM events WHERE kind = 'extraction.enqueued'")
    assert [(e["actor"], json.loads(e["payload"])["trigger"]) for e in events] == [("admin:ops", "upload")]
    assert service.store.scalar("SELECT COUNT(*) FROM extraction_runs") == 1


def test_an_upload_is_queued_even_when_sessions_do_not_queue_extraction(tmp_path, clock):
    from memory_core.settings import default_settings

    settings = default_settings(extraction={"extract_on_session_end": False})
    with MemoryService.open(tmp_path / "m.sqlite", settings, clock=clock, embedder=HashingEmbedder()) as service:
        service.grant("assistant", "user:alice", read=True, write=True, actor="test")
        assert service.start_session(agent_id="assistant", user_id="alice").end() is None
        detail = service.extract_transcript(agent_id="assistant", user_id="alice", turns=[{"role": "user", "content": "Hi."}],
                                            run_now=False)
        assert detail.run["trigger"] == "upload" and service.store.scalar("SELECT COUNT(*) FROM extraction_runs") == 1
